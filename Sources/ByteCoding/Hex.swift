/// Bytes as text for keys, seeds, vendor data and capability values: lowercase hex, two digits
/// per byte, and back.
extension Array where Element == UInt8 {
    package var hexString: String {
        map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// The bytes of `text`, two hex digits (either case) per byte and nothing else; nil for an
    /// odd count or any other character (no sign, no prefix, no spaces).
    package init?(hexString text: some StringProtocol) {
        let scalars = [Unicode.Scalar](text.unicodeScalars)
        guard scalars.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(scalars.count / 2)
        for pair in stride(from: 0, to: scalars.count, by: 2) {
            guard let high = Self.nibble(scalars[pair]), let low = Self.nibble(scalars[pair + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        self = bytes
    }

    private static func nibble(_ scalar: Unicode.Scalar) -> UInt8? {
        switch scalar {
        case "0"..."9": UInt8(scalar.value - 48)
        case "a"..."f": UInt8(scalar.value - 87)
        case "A"..."F": UInt8(scalar.value - 55)
        default: nil
        }
    }
}
