/// The error a transport threw, kept whole: its type and payload survive into `UCIHostError`, so
/// callers can switch on it (`failure.error as? TransportError`) and `Doctor.remedy(for:)` can
/// say what to do about it.
///
/// Equatable so that `UCIHostError` stays Equatable: two failures are equal when their errors are
/// of the same type and, for an Equatable type, equal values; for any other type, when they print
/// the same (`String(reflecting:)`).
package struct TransportFailure: Error, Sendable, Equatable, CustomStringConvertible {
    package let error: any Error

    package init(_ error: any Error) {
        // A failure handed on again is not boxed twice.
        self.error = (error as? TransportFailure)?.error ?? error
    }

    package var description: String { "\(error)" }

    package static func == (a: TransportFailure, b: TransportFailure) -> Bool {
        guard type(of: a.error) == type(of: b.error) else { return false }
        if let equatable = a.error as? any Equatable { return equatable.isEqual(to: b.error) }
        return String(reflecting: a.error) == String(reflecting: b.error)
    }
}

extension Equatable {
    fileprivate func isEqual(to other: Any) -> Bool {
        (other as? Self) == self
    }
}
