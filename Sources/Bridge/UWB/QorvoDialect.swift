import PeerProtocol
import UCI
import UCIHost

/// Qorvo's FiRa UCI firmware (QM33 SDK on the DWM3001CDK). Asks for angles and reports them with
/// their figures of merit, as Qorvo's own `run_fira_twr` does, also where the board does not say
/// (single-antenna boards then report a figure of merit of 0: no direction;
/// firmware-notes/dwm3001cdk.md); a board whose SUPPORTED_AOA says none gets time of flight only.
/// Brought up the standard FiRa way.
package struct QorvoDialect: UWBDialect {
    package init() {}

    package func appConfig(
        for parameters: PeerMessage.RangingParameters, asController: Bool, sts: SessionSTS, hops: Bool, profile: UWBProfile,
        board: BoardDescription?
    ) -> [AppConfigTLV] {
        sessionTLVs(for: parameters, asController: asController, sts: sts, hops: hops, profile: profile) + reports(board: board)
    }

    package func reports(board: BoardDescription?) -> [AppConfigTLV] {
        reportTLVs(angles: board?.measuresAngles != false, board: board)
    }
}
