import Events
import Logging
import Testing
import UCI
@testable import Bridge
@testable import Simulation

/// The key a board's calibration is filed under: the serial a USB transport names, else the
/// vendor data in hex, leading zeros kept.
@Suite struct BoardKeyTests {
    static let info = DeviceInfo(
        uciVersion: UCIVersion(major: 2, minor: 0, maintenance: 0), macVersion: UCIVersion(major: 1, minor: 3, maintenance: 0),
        phyVersion: UCIVersion(major: 1, minor: 3, maintenance: 0), uciTestVersion: UCIVersion(major: 1, minor: 1, maintenance: 0),
        vendorData: [0x4E, 0x05, 0x00])

    @Test func aUSBBoardIsKeyedByItsSerialAnyOtherByItsVendorData() {
        #expect(usbSerial(inTransport: "usb:1-1 1915:520f serial 0123456789AB") == "0123456789AB")
        #expect(usbSerial(inTransport: "tcp:127.0.0.1:7000") == nil)
        #expect(usbSerial(inTransport: "usb:1-1 serial ") == nil)
        #expect(Self.info.boardKey(serial: "0123456789AB") == "0123456789AB")
        #expect(Self.info.boardKey(serial: nil) == "vendor:4e0500")
    }
}
