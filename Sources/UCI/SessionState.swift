/// SESSION_STATUS_NTF state. Closed: an unknown value is a protocol error.
package enum SessionState: UInt8, Sendable {
    case initialized = 0, deinitialized = 1, active = 2, idle = 3
}
