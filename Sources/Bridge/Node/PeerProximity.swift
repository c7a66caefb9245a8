/// One peer's proximity: readings -> filter -> `range`, `near`, `far` events and contacts. The
/// node core runs every reading of a radio read through it directly; the peer's machine sees it
/// as a `ProximityView` with each input that needs it.
struct PeerProximity {
    var processor: RangeProcessor
    var lastMeasuredAt: Int64?

    var view: ProximityView {
        ProximityView(
            contactArmed: processor.proximity.contactArmed, filtered: processor.proximity.filtered,
            isNear: processor.proximity.isNear, lastMeasuredAt: lastMeasuredAt)
    }
}
