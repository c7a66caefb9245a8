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

/// The calibration check names the board as the `device` event does and the command that files
/// its offset.
@Suite struct CalibrationFindingTests {
    @Test func aBoardWithoutAFiledOffsetIsAWarningThatNamesCalibrate() {
        let records = CalibrationRecords(path: "/etc/nearby-bridge/rig.json", boards: ["OTHER"])
        let finding = Doctor.calibrationFinding(label: "UWB board usb:1-1", board: "0123456789AB", records: records)
        #expect(finding.status == .warn)
        #expect(finding.detail.contains("0123456789AB has no offset in /etc/nearby-bridge/rig.json"))
        #expect(finding.fix?.hasPrefix("nearby-bridge calibrate --config /etc/nearby-bridge/rig.json") == true)
    }

    @Test func aFiledBoardIsOkAndWithoutASettingsFileItIsNotChecked() {
        let records = CalibrationRecords(path: "rig.json", boards: ["0123456789AB"])
        #expect(Doctor.calibrationFinding(label: "b", board: "0123456789AB", records: records).status == .ok)
        #expect(Doctor.calibrationFinding(label: "b", board: "0123456789AB", records: nil).status == .info)
    }
}
