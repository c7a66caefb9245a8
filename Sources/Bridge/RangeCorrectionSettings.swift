import PeerProtocol
import Proximity
import UCI

/// The received-level bias table of the board family and each board's calibrated offset
/// (docs/PROXIMITY.md, "Range correction"; firmware-notes/README.md for the DW3000 default).
package struct RangeCorrectionSettings: Sendable, Equatable {
    /// The table's name as the `device` event reports it, and the table (nil: no correction).
    package var tableName = "aps011-prf64"
    package var table: RangeBiasTable? = .aps011PRF64
    /// Offsets (metres read too long) by board (`DeviceInfo.boardKey`), as `nearby-bridge calibrate` wrote them.
    package var offsets: [String: Double] = [:]

    package init() {}

    /// The correction for one board: its calibrated offset if there is one.
    package func correction(forBoard board: String) -> RangeCorrection {
        RangeCorrection(
            table: table, tableName: tableName, offsetMetres: offsets[board] ?? 0, calibrated: offsets[board] != nil)
    }
}
