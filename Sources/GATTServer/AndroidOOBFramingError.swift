/// Why an OOB message cannot go to the phone as one notification (`AndroidOOBGATTService`).
package enum AndroidOOBFramingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Longer than ATT_MTU − 3: the phone has not raised the MTU the service requires.
    case exceedsMTU(length: Int, attMTU: Int)

    package var description: String {
        switch self {
        case let .exceedsMTU(length, attMTU):
            "A \(length)-octet OOB message exceeds the \(attMTU - 3) octets of one notification at ATT_MTU \(attMTU); "
                + "the phone app must request an ATT_MTU of at least \(AndroidOOBGATTService.minimumATTMTU) first."
        }
    }
}
