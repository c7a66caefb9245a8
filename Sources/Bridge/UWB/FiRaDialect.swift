import PeerProtocol
import UCI
import UCIHost

/// Plain FiRa UCI as an AOSP host drives it (and Google's pica emulates it): angles are asked for
/// only of a board whose capabilities say it measures them; otherwise time of flight only.
package struct FiRaDialect: UWBDialect {
    package init() {}

    package func appConfig(
        for parameters: PeerMessage.RangingParameters, asController: Bool, sts: SessionSTS, hops: Bool, profile: UWBProfile,
        board: BoardDescription?
    ) -> [AppConfigTLV] {
        sessionTLVs(for: parameters, asController: asController, sts: sts, hops: hops, profile: profile) + reports(board: board)
    }

    package func reports(board: BoardDescription?) -> [AppConfigTLV] {
        reportTLVs(angles: board?.measuresAngles == true, board: board)
    }
}
