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

/// Issue 29: doctor says how the bridge will read each board's ranges, and what a board without
/// RSSI costs.
@Suite struct RangePolicyFindingTests {
    static func info(major: UInt8) -> DeviceInfo {
        let version = UCIVersion(major: major, minor: major == 1 ? 1 : 0, maintenance: 0)
        return DeviceInfo(uciVersion: version, macVersion: version, phyVersion: version, uciTestVersion: version, vendorData: [])
    }

    @Test func aUCI11BoardIsAWarningThatNamesThePolicyAndTheFirmwareNotes() {
        let finding = Doctor.rangePolicyFinding(label: "UWB board usb:1-1", info: Self.info(major: 1), calibrated: true)
        #expect(finding.status == .warn)
        #expect(finding.check == "UWB board usb:1-1 range correction")
        #expect(finding.detail.contains("range data has no RSSI: no RSSI: calibrated offset, no bias"))
        #expect(finding.detail.contains("bump from distance alone"))
        #expect(finding.fix?.contains("firmware-notes/rssi.md") == true)
        let uncalibrated = Doctor.rangePolicyFinding(label: "b", info: Self.info(major: 1), calibrated: false)
        #expect(uncalibrated.detail.contains("no offset (uncalibrated)"))
    }

    @Test func aUCI20BoardIsAskedForRSSIAndTheBothPoliciesAreNamed() {
        let finding = Doctor.rangePolicyFinding(label: "b", info: Self.info(major: 2), calibrated: nil)
        #expect(finding.status == .ok)
        #expect(finding.detail.contains("RSSI asked (RSSI_REPORTING 1)"))
        #expect(finding.detail.contains("rounds with RSSI: aps011-prf64 bias at the reported RSSI"))
        #expect(finding.detail.contains("rounds without: no offset (uncalibrated), no bias"))
    }
}
