import PeerProtocol
import UCI
import UCIHost

/// The dialects a config can name (`"uwbDialect"`).
package enum UWBDialectName: String, Sendable, CaseIterable, Codable {
    /// Qorvo's FiRa UCI firmware for the DW3000 family (QM33 SDK, DWM3001CDK): the reference board.
    case qorvo
    /// Plain FiRa UCI with Android's defaults, as Google's pica emulator and AOSP hosts drive it.
    case fira

    package var dialect: any UWBDialect {
        switch self {
        case .qorvo: QorvoDialect()
        case .fira: FiRaDialect()
        }
    }
}
