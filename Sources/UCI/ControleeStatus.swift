import ByteCoding

/// One controlee's result of a multicast list update: in the UCI 2.0 response and in the
/// notification (whose 1.x layout also names the sub-session).
package struct ControleeStatus: Hashable, Sendable {
    package var shortAddress: UInt16
    /// Only in the UCI 1.x notification layout.
    package var subSessionID: UInt32?
    /// A `MulticastUpdateStatus` value.
    package var status: UInt8

    package init(shortAddress: UInt16, subSessionID: UInt32? = nil, status: UInt8) {
        self.shortAddress = shortAddress
        self.subSessionID = subSessionID
        self.status = status
    }
}
