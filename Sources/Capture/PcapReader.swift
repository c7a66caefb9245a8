import Foundation

/// Reads back what `PcapWriter` wrote (current file only; rotated ones are older).
package enum PcapReader {
    package struct Record: Sendable, Equatable {
        package var microseconds: Int64
        package var bytes: [UInt8]
    }

    package static func read(_ path: String) throws(CaptureError) -> (linkType: UInt32, records: [Record]) {
        try parse([UInt8](readFile(path)), path: path)
    }

    /// The records in a pcap file's bytes (`path` is named in errors). A last record cut short
    /// (the recorder was killed mid-write) is left out.
    package static func parse(_ bytes: [UInt8], path: String) throws(CaptureError) -> (linkType: UInt32, records: [Record]) {
        func u32(_ at: Int) -> UInt32 {
            UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
        }
        guard bytes.count >= 24, u32(0) == 0xA1B2_C3D4 else {
            throw .malformed(path: path, reason: "no little-endian pcap header (magic A1B2C3D4)")
        }
        var records: [Record] = []
        var offset = 24
        while offset + 16 <= bytes.count {
            let length = Int(u32(offset + 8))
            guard offset + 16 + length <= bytes.count else { break }  // a record cut off by a crash
            records.append(
                Record(
                    microseconds: Int64(u32(offset)) * 1_000_000 + Int64(u32(offset + 4)),
                    bytes: Array(bytes[(offset + 16)..<(offset + 16 + length)])))
            offset += 16 + length
        }
        return (u32(20), records)
    }
}
