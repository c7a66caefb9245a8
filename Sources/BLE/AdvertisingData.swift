/// Advertising or scan response data: AD structures one after another (Core Specification
/// Vol 3 Part C §11), each `length | type | data[length - 1]`. Walking them is the one place that
/// reads this layout; everything that looks into an advert goes through here.
///
/// Reading is lenient, as receivers are: a zero length ends the data early, and a structure that
/// runs past the end is dropped with whatever follows.
package struct AdvertisingData: Sequence, Sendable, Equatable {
    package static let flags: UInt8 = 0x01
    package static let shortenedLocalName: UInt8 = 0x08
    package static let completeLocalName: UInt8 = 0x09
    package static let manufacturerSpecific: UInt8 = 0xFF
    /// Legacy advertising data and scan response data hold at most this many bytes each.
    package static let legacyLimit = 31

    /// One AD structure: its type and data, and where the whole structure lies in the bytes.
    package struct Structure: Sendable, Equatable {
        package var type: UInt8
        package var data: ArraySlice<UInt8>
        package var range: Range<Int>
    }

    package let bytes: [UInt8]

    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Builds data from (type, data) pairs; each data must fit one structure (at most 254 bytes).
    package init(_ structures: [(type: UInt8, data: [UInt8])]) {
        var bytes: [UInt8] = []
        for structure in structures {
            precondition(structure.data.count < 255, "an AD structure holds at most 254 bytes of data")
            bytes += [UInt8(structure.data.count + 1), structure.type] + structure.data
        }
        self.bytes = bytes
    }

    package struct Iterator: IteratorProtocol {
        let bytes: [UInt8]
        var index = 0

        package mutating func next() -> Structure? {
            guard index < bytes.count else { return nil }
            let length = Int(bytes[index])
            let end = index + 1 + length
            guard length > 0, end <= bytes.count else {
                index = bytes.count
                return nil
            }
            defer { index = end }
            return Structure(type: bytes[index + 1], data: bytes[(index + 2)..<end], range: index..<end)
        }
    }

    package func makeIterator() -> Iterator { Iterator(bytes: bytes) }

    /// The Complete or Shortened Local Name, if there is one and it is UTF-8.
    package var localName: String? {
        guard let name = first(where: { $0.type == Self.completeLocalName || $0.type == Self.shortenedLocalName }) else {
            return nil
        }
        return String(validating: name.data, as: UTF8.self)
    }

    /// A Local Name structure of at most `limit` bytes of data: the whole name as Complete Local
    /// Name when it fits, otherwise its longest prefix that ends on a character boundary, as
    /// Shortened Local Name.
    package static func localName(_ name: String, limit: Int = legacyLimit - 2) -> AdvertisingData {
        let utf8 = Array(name.utf8)
        guard utf8.count > limit else { return AdvertisingData([(completeLocalName, utf8)]) }
        var prefix = ""
        for character in name {
            guard prefix.utf8.count + character.utf8.count <= limit else { break }
            prefix.append(character)
        }
        return AdvertisingData([(shortenedLocalName, Array(prefix.utf8))])
    }

    /// The same data without the structures of `type`.
    package func removing(_ type: UInt8) -> AdvertisingData {
        AdvertisingData(filter { $0.type != type }.flatMap { bytes[$0.range] })
    }

    /// The leading structures that fit in `limit` bytes, and the rest: how a blob of advertising
    /// data followed by scan response data (mgmt's Device Found) divides into the two.
    package func split(at limit: Int = legacyLimit) -> (head: [UInt8], rest: [UInt8]) {
        var end = 0
        for structure in self {
            guard structure.range.upperBound <= limit else { break }
            end = structure.range.upperBound
        }
        return (Array(bytes[..<end]), Array(bytes[end...]))
    }
}
