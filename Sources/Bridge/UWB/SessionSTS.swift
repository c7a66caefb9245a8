import PeerProtocol
import UCI
import UCIHost

/// How a session's scrambled timestamp sequence is keyed.
package enum SessionSTS: Sendable, Equatable {
    /// Static STS from the parameters' vendor id and IV (random per session on v1, derived on v2).
    case fromParameters
    /// Provisioned STS (STS_CONFIG 3) with a SESSION_KEY both sides derived on a v2 link.
    case provisioned(sessionKey: [UInt8])
}
