import Events
import Proximity
import Synchronization

/// One peer's proximity state, shared by the registry and the peer's session.
///
/// The registry runs every reading of a radio read through it without hopping onto the
/// session's actor: at hundreds of peers that hop cost more than the work itself (README,
/// "Performance"). The session reads it for its own decisions (ranging priority, whether a
/// contact is still to be had, the distance of a bump) and hears of contacts only. Both sides
/// hold the lock for a few hundred nanoseconds and rarely at once.
final class PeerRanging: Sendable {
    private struct State {
        var processor: RangeProcessor
        /// When a round last carried a distance: the peer is alive even if it sends no message.
        var lastMeasuredAt: Int64?
    }

    private let state: Mutex<State>

    init(peer: String, config: BridgeConfig) {
        state = Mutex(State(processor: RangeProcessor(peer: peer, config: config)))
    }

    /// What a batch of readings left for the caller besides its events.
    struct Outcome {
        /// The filtered distance afterwards, for following the nearest peer.
        var filtered: Double?
        /// Distances at which proximity saw a contact, in order: each may start a profile drop.
        var contacts: [Double] = []
    }

    /// Runs the peer's readings in order and appends their `range`, `near` and `far` events.
    func process(_ readings: some Sequence<RangeReading>, hostTime: Int64, into events: inout [Event.Body]) -> Outcome {
        state.withLock { state in
            var contacts: [Double] = []
            for reading in readings {
                let outcome = state.processor.process(reading.measurement, of: reading.round, hostTime: hostTime)
                if outcome.measured { state.lastMeasuredAt = hostTime }
                events.append(.range(outcome.range))
                let peer = state.processor.peer
                for change in outcome.changes {
                    switch change {
                    case .near(let d): events.append(.near(.init(peer: peer, distance: d, azimuth: outcome.azimuth)))
                    case .far(let d): events.append(.far(.init(peer: peer, distance: d, azimuth: outcome.azimuth)))
                    case .contact(let d): contacts.append(d)
                    }
                }
            }
            return Outcome(filtered: state.processor.proximity.filtered, contacts: contacts)
        }
    }

    var lastMeasuredAt: Int64? { state.withLock { $0.lastMeasuredAt } }
    var isNear: Bool { state.withLock { $0.processor.proximity.isNear } }
    var filtered: Double? { state.withLock { $0.processor.proximity.filtered } }

    /// Takes this gesture's one contact for a drop the peer started: false when it was had.
    func takeContact() -> Bool {
        state.withLock { state in
            guard state.processor.proximity.contactArmed else { return false }
            state.processor.consumeContact()
            return true
        }
    }
}
