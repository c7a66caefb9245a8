/// One frame of a ranging round on the shared UWB air, from one body to another (a frame
/// several bodies listen to appears once per listener, with the same `round` and `slot`).
package struct UWBAirFrame: Equatable, Sendable {
    package enum Kind: Equatable, Sendable {
        /// The ranging control message, the poll, a response, the final: losing one loses the
        /// round's measurement.
        case control, poll, response, final
        /// The measurement report that gives the controlee the result (deferred DS-TWR): losing
        /// it loses only the controlee's reading.
        case report
    }

    package var kind: Kind
    /// The round it belongs to (frames of one round never overlap each other) and its slot.
    package var round: Int
    package var slot: Int
    package var channel: UInt8
    package var preambleCode: UInt8
    package var transmitter: Int
    /// nil: nobody listens (an unmatched controller calling into the void still occupies the air).
    package var receiver: Int?
    /// Microseconds on the world's clock.
    package var start: Double
    package var end: Double

    package func overlaps(_ other: UWBAirFrame) -> Bool {
        other.start < end && start < other.end
    }
}
