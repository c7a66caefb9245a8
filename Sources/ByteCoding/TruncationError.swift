/// A codec's error for a read past the end of its input. Each codec keeps its own error type
/// (and wording); the reader only needs to make one.
public protocol TruncationError: Error {
    /// `context` names the message being read, `field` the value that did not fit.
    static func truncated(context: String, field: String, needed: Int, available: Int) -> Self
}
