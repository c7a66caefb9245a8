import ByteCoding

/// The framing shared by capability and configuration blocks (the PDL's `Capabilities` and
/// `Configuration`): technology id (1), size (1, counting these two octets), body. Blocks follow
/// each other to a point the message fixes (its end, or the trailing fields of a later version).
enum TechnologyBlocks {
    /// Reads blocks until `trailing` octets are left, each naming a known technology once, and
    /// checks that they are exactly the technologies `expected` names.
    static func read(
        _ reader: inout LittleEndianReader<OOBMessageError>, leaving trailing: Int, expected: RangingTechnologySet
    ) throws(OOBMessageError) -> [(RangingTechnology, [UInt8])] {
        var blocks: [(RangingTechnology, [UInt8])] = []
        var seen: RangingTechnologySet = []
        while reader.remaining > trailing {
            guard reader.remaining - trailing >= 2 else {
                throw .truncated(context: reader.context, field: "technology block header", needed: 2, available: reader.remaining - trailing)
            }
            let id = try reader.u8("technology id")
            let size = try reader.u8("technology block size")
            guard let technology = RangingTechnology(rawValue: id) else { throw .unknownTechnology(id) }
            guard size >= 2 else { throw .blockSizeMismatch(technology, size: Int(size), expected: 2) }
            let bodySize = Int(size) - 2
            guard bodySize <= reader.remaining - trailing else {
                throw .truncated(context: reader.context, field: "\(technology) block", needed: bodySize, available: reader.remaining - trailing)
            }
            guard !seen.contains(technology.bit) else { throw .duplicateTechnology(technology) }
            seen.insert(technology.bit)
            blocks.append((technology, try reader.bytes(bodySize, "\(technology) block")))
        }
        guard seen == expected else { throw .blocksDisagreeWithBitmap(bitmap: expected, blocks: seen) }
        return blocks
    }

    /// One block's octets.
    static func encode(_ technology: RangingTechnology, _ body: [UInt8]) -> [UInt8] {
        precondition(body.count <= 253, "a block's size octet counts at most 255")
        return [technology.rawValue, UInt8(body.count + 2)] + body
    }

    /// A body whose size the layout fixes.
    static func exact(_ body: [UInt8], _ size: Int, _ technology: RangingTechnology) throws(OOBMessageError) {
        guard body.count == size else { throw .blockSizeMismatch(technology, size: body.count + 2, expected: size + 2) }
    }
}
