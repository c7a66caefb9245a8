import ByteCoding

/// An attribute type or a service or characteristic UUID. Kept as the full 128 bits so that a
/// 16-bit UUID and its 128-bit form over the Bluetooth Base UUID compare equal (a client may ask
/// Read By Type for either, Core Specification Vol 3 Part B §2.5.1); written on the air in the
/// shortest form, little-endian (Vol 3 Part F §3.2.1).
package struct GATTUUID: Hashable, Sendable, CustomStringConvertible {
    /// The 16 octets in the order the text form writes them (most significant first).
    package let octets: [UInt8]

    /// 0000xxxx-0000-1000-8000-00805F9B34FB: the Bluetooth Base UUID, whose 16-bit aliases are
    /// the SIG's assigned numbers.
    private static let baseTail: [UInt8] = [0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0x80, 0x5F, 0x9B, 0x34, 0xFB]

    private init(octets: [UInt8]) { self.octets = octets }

    /// A SIG-assigned 16-bit UUID.
    package init(_ short: UInt16) {
        self.init(octets: [0, 0, UInt8(short >> 8), UInt8(short & 0xFF)] + Self.baseTail)
    }

    /// The text form, `XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX` (either case), or four hex digits
    /// for a 16-bit UUID; nil for anything else.
    package init?(_ text: String) {
        let digits = text.filter { $0 != "-" }
        if digits.count == 4, let short = UInt16(digits, radix: 16) {
            self.init(short)
            return
        }
        guard text.count == 36, digits.count == 32,
            [8, 13, 18, 23].allSatisfy({ text[text.index(text.startIndex, offsetBy: $0)] == "-" }),
            let bytes = [UInt8](hexString: digits)
        else { return nil }
        self.init(octets: bytes)
    }

    /// The little-endian octets of an attribute type as a PDU carries it: 2 or 16; nil for any
    /// other count.
    package init?(littleEndian bytes: some Collection<UInt8>) {
        switch bytes.count {
        case 2:
            let array = Array(bytes)
            self.init(UInt16(array[0]) | UInt16(array[1]) << 8)
        case 16: self.init(octets: bytes.reversed())
        default: return nil
        }
    }

    /// The 16-bit alias, if this UUID lies on the Bluetooth Base UUID.
    package var short: UInt16? {
        guard octets[0] == 0, octets[1] == 0, Array(octets[4...]) == Self.baseTail else { return nil }
        return UInt16(octets[2]) << 8 | UInt16(octets[3])
    }

    /// As a PDU carries it: 2 octets for a 16-bit alias, else 16; little-endian either way.
    package var littleEndian: [UInt8] {
        if let short { return [UInt8(short & 0xFF), UInt8(short >> 8)] }
        return octets.reversed()
    }

    /// Uppercase text form; a 16-bit alias as four digits (`2902`).
    package var description: String {
        if let short { return String(format4: short) }
        let hex = octets.hexString.uppercased()
        var text = ""
        for (index, character) in hex.enumerated() {
            if [8, 12, 16, 20].contains(index) { text.append("-") }
            text.append(character)
        }
        return text
    }

    // The attribute types GATT defines (Vol 3 Part G §3 and the Assigned Numbers).
    package static let primaryService = GATTUUID(0x2800)
    package static let secondaryService = GATTUUID(0x2801)
    package static let include = GATTUUID(0x2802)
    package static let characteristic = GATTUUID(0x2803)
    package static let clientCharacteristicConfiguration = GATTUUID(0x2902)
    package static let genericAccess = GATTUUID(0x1800)
    package static let deviceName = GATTUUID(0x2A00)
}

extension String {
    fileprivate init(format4 value: UInt16) {
        let hex = String(value, radix: 16, uppercase: true)
        self = String(repeating: "0", count: 4 - hex.count) + hex
    }
}
