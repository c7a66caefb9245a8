import BLE
import BLEBlueZ
import BlueZMgmt
import Glibc
import Logging
import Proximity
import UCI
import UCIHost
import UCIUSB

/// One diagnosis: what was checked, what was found, and what to do about it.
package struct Finding: Sendable, Equatable {
    package enum Status: String, Sendable, Comparable {
        case ok, info, warn, fail
        private var rank: Int { [.ok: 0, .info: 1, .warn: 2, .fail: 3][self]! }
        package static func < (a: Status, b: Status) -> Bool { a.rank < b.rank }
    }
    package var check: String
    package var status: Status
    package var detail: String
    package var fix: String?

    package init(_ check: String, _ status: Status, _ detail: String, fix: String? = nil) {
        self.check = check
        self.status = status
        self.detail = detail
        self.fix = fix
    }
}
