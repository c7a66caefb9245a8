import UCI

/// What the host reports besides command responses, in arrival order.
package enum UCIHostEvent: Sendable, Equatable {
    case notification(UCINotification)
    /// The transport ended; every later command fails with this error.
    case closed(UCIHostError)
}
