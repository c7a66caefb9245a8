import BLEBlueZ
import BlueZMgmt
import CLibUSB
import Doctor
import Glibc
import StreamIO
import Testing
import UCI
import UCIHost
import UCIUSB

/// How-to-fix texts come from `Doctor.remedy(for:)`, chosen by the error's type and case, never
/// by matching its text; the errors themselves only say what happened.
@Suite struct RemedyTests {
    static func remedy(_ error: any Error) throws -> String {
        try #require(Doctor.remedy(for: error))
    }

    @Test func mgmtPermissionDeniedAsksForNetAdmin() throws {
        let error = BlueZError.command(.addAdvertising, .permissionDenied)
        #expect(try Self.remedy(error).contains("setcap cap_net_admin+ep"))
        #expect(!error.description.contains("setcap"))
    }

    @Test func rfkilledAsksToUnblock() throws {
        #expect(try Self.remedy(BlueZError.command(.setPowered, .rfkilled)) == "rfkill unblock bluetooth")
    }

    @Test func busyDiscoveryPointsAtTheOtherScanner() throws {
        for command in [MgmtOpcode.startDiscovery, .stopDiscovery] {
            let hint = try Self.remedy(BlueZError.command(command, .busy))
            #expect(hint.contains("bluetoothctl scan"))
            #expect(hint.contains("bluetoothd"))
        }
        // Busy on anything else is not a scan in the way.
        #expect(Doctor.remedy(for: BlueZError.command(.addAdvertising, .busy)) == nil)
    }

    @Test func noAdapterPointsAtRfkillAndTheCable() throws {
        let hint = try Self.remedy(BlueZError.noAdapter(requested: "hci0", available: []))
        #expect(hint.contains("rfkill list"))
        #expect(hint.contains("cable"))
        #expect(try Self.remedy(BlueZError.noAdapter(requested: "hci2", available: ["hci0", "hci1"])).contains("hci0, hci1"))
    }

    @Test func ttyPermissionDeniedPointsAtTheUdevRuleAndGroup() throws {
        let error = TransportError.openDevice(path: "/dev/ttyACM0", errno: EACCES)
        let hint = try Self.remedy(error)
        #expect(hint.contains("70-nearby-bridge.rules"))
        #expect(hint.contains("`nearby` group"))
        #expect(error.description == "open(/dev/ttyACM0) failed: Permission denied (errno 13)")
        #expect(try Self.remedy(TransportError.openDevice(path: "/dev/ttyACM9", errno: ENOENT)).contains("plugged in"))
        #expect(try Self.remedy(TransportError.openDevice(path: "/dev/ttyACM0", errno: EBUSY)).contains("another program"))
    }

    @Test func usbAccessDeniedPointsAtTheUdevRuleAndGroup() throws {
        let error = USBError("libusb_open", LIBUSB_ERROR_ACCESS.rawValue)
        #expect(try Self.remedy(error).contains("70-nearby-bridge.rules"))
        #expect(!error.description.contains("udev"))
    }

    @Test func aTransportErrorIsFoundThroughTheHostError() throws {
        let error = UCIHostError.transport(TransportFailure(TransportError.openDevice(path: "/dev/ttyACM0", errno: EACCES)))
        #expect(try Self.remedy(error).contains("`nearby` group"))
        #expect(Doctor.remedy(for: UCIHostError.transport(TransportFailure(TransportError.closed))) == nil)
    }

    @Test func unrelatedErrorsHaveNoRemedy() {
        struct Unrelated: Error {}
        #expect(Doctor.remedy(for: Unrelated()) == nil)
        #expect(Doctor.remedy(for: UCIHostError.closed) == nil)
        #expect(Doctor.remedy(for: UCIHostError.timeout(command: "CORE_DEVICE_RESET")) == nil)
        #expect(Doctor.remedy(for: TransportError.closed) == nil)
        #expect(Doctor.remedy(for: BlueZError.command(.setPowered, .failed)) == nil)
        #expect(Doctor.remedy(for: BlueZError.timeout(.readControllerInfo)) == nil)
    }
}
