import Glibc

/// An sd-bus call that failed: which call, and the errno it returned (sd-bus returns `-errno`).
package struct BusFailure: Error, Hashable, Sendable, CustomStringConvertible {
    package let call: String
    package let errno: Int32

    package var description: String { "\(call) failed: \(String(cString: strerror(errno)))" }

    /// `result` when it is not negative; a failure naming `call` otherwise.
    @discardableResult
    static func check(_ result: Int32, _ call: String) throws(BusFailure) -> Int32 {
        guard result >= 0 else { throw BusFailure(call: call, errno: -result) }
        return result
    }
}
