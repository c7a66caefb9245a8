import Testing

@testable import Simulation

/// A rig on a world server's air (`--ble world:`) asks for LE privacy with its key: the frame
/// is type 0x07 with the 16 key octets (AirWire.swift's layout), and a key of another size is
/// refused rather than taken.
@Suite struct RemoteAirPrivacyFrameTests {
    @Test func thePrivacyFrameCarriesTheKeyAndNothingElse() throws {
        let irk = Array(UInt8(0)..<16)
        #expect(AirFrame.privacy(irk).encoded() == [0x07, 0x10, 0x00] + irk)
        var buffer = [0x07, 0x10, 0x00] + irk + [0x03, 0x00, 0x00]
        #expect(try AirFrame.next(from: &buffer) == .privacy(irk))
        #expect(try AirFrame.next(from: &buffer) == .scan)
        var short: [UInt8] = [0x07, 0x0F, 0x00] + Array(irk.prefix(15))
        #expect(throws: AirFrame.Invalid.self) { try AirFrame.next(from: &short) }
    }
}
