import ByteCoding
import Testing

/// The one hex form of keys, key seeds, vendor data and capability values.
@Suite struct HexTests {
    @Test func bytesAsTextAndBack() {
        #expect([0x00, 0x0A, 0xAB, 0xFF].hexString == "000aabff")
        #expect([UInt8]().hexString == "")
        #expect([UInt8](hexString: "000aABff") == [0x00, 0x0A, 0xAB, 0xFF])
        #expect([UInt8](hexString: "") == [])
    }

    /// Only digit pairs: what `UInt8(_:radix:)` would take ("+f") is refused too.
    @Test(arguments: ["0", "abc", "+f", "-1", "0x", " 0", "g0", "0é"])
    func anythingElseIsRefused(text: String) {
        #expect([UInt8](hexString: text) == nil)
    }
}
