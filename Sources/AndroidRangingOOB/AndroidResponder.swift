/// What both of the rig's Android machines are to the node: `AndroidOOBResponder` (the ranging
/// OOB specification) and `JetpackResponder` (the rig's Jetpack layout) take the same inputs and
/// return the same actions, so one caller drives either.
package protocol AndroidResponder: Sendable {
    /// One input at `now`; what the node does about it, in order.
    mutating func receive(_ input: AndroidOOBResponderInput, now: Int64) -> [AndroidOOBResponderAction]
    /// The board session the machine answers for, if any.
    var boardSessionID: UInt32? { get }
}
