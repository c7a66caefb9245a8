import PeerProtocol
import Proximity
import UCI

/// The session settings this project uses for DS-TWR, one-to-one or one-to-many, whatever the
/// board (see firmware-notes/): deferred DS-TWR, static STS with per-session values agreed out of
/// band. How they become SET_APP_CONFIG TLVs is the `UWBDialect`'s business.
package struct UWBProfile: Sendable, Equatable {
    package var channel: UInt8 = 9
    /// The preamble codes sessions are spread over, one per session by its id: the BPRF codes
    /// 9-12 every FiRa board supports on every channel. Frames under another code interfere
    /// less (docs/PROXIMITY.md "Shared air"), so neighbouring rigs' sessions in one hall
    /// collide less; the controlee takes whatever code `rangingParameters` names, so peers
    /// that always proposed code 10 keep working.
    package var preambleCodes: [UInt8] = [9, 10, 11, 12]
    /// Whether one-to-one sessions hop (FiRa round hopping) when both boards can: rounds that
    /// meet another session's on the air then meet it once, not for the seconds or minutes two
    /// boards' clocks take to drift apart. Off only to measure the scheduling without it.
    package var hopsRounds = true
    package var slotDurationRSTU: UInt16 = 2400
    package var slotsPerRangingRound: UInt8 = 6
    /// 100 ms: twice the uwb_core default rate, so a bump is seen within a tenth of a second.
    package var rangingIntervalMilliseconds: UInt16 = 100
    /// The regulatory region the board must keep (ISO 3166-1 alpha-2, e.g. "DE"), sent at
    /// bring-up with Android's vendor command ANDROID_SET_COUNTRY_CODE; nil sends nothing and
    /// the board keeps the region it was built or flashed for.
    package var countryCode: String?

    package init() {}

    /// The code a session with this id ranges with: the session id is random, so a hall's
    /// sessions spread evenly over `preambleCodes` without anyone coordinating them.
    package func preambleCode(session: UInt32) -> UInt8 {
        preambleCodes[Int(session % UInt32(preambleCodes.count))]
    }

    /// Slots per round of a one-to-many session for up to `controlees`: the control and poll
    /// messages, a response and a result report per controlee, and the final message (deferred
    /// DS-TWR). Fixed when the session starts, since controlees join while it runs. With 8
    /// controlees and 2400-RSTU (2 ms) slots a round takes 38 ms of the 100 ms interval.
    /// Derived from the FiRa round structure, not measured on a board.
    package func oneToManySlots(controlees: Int) -> UInt8 {
        UInt8(clamping: max(Int(slotsPerRangingRound), 3 + 2 * controlees))
    }
}
