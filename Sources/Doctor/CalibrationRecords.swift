import BLE
import BLEBlueZ
import BlueZMgmt
import Glibc
import Logging
import Proximity
import UCI
import UCIHost
import UCIUSB

/// The boards a settings file has offsets for (`calibration` in --config), keyed like the
/// `board` of the `device` event: USB serial, else "vendor:" and the vendor data in hex.
package struct CalibrationRecords: Sendable {
    package var path: String
    package var boards: Set<String>

    package init(path: String, boards: Set<String>) {
        self.path = path
        self.boards = boards
    }
}
