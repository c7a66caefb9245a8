/// What the node's scheduler needs to know about a session, produced on each tick.
struct SessionReport: Sendable, Equatable {
    var timedOut: Bool
    var holdsPriority: Bool
    var rssi: Double?
    var isRanging: Bool
    var available: Bool
    var lastHeard: Int64
    /// The one-to-many session it has a place in, as its controller.
    var sharedSession: UInt32?
}
