/// Who runs the session (the PDL's `UwbDeviceMode`, one octet): the controller picks the
/// session's parameters, the controlee follows them.
package enum UWBDeviceMode: UInt8, CaseIterable, Sendable, CustomStringConvertible {
    case controller = 0x1
    case controlee = 0x2

    package var description: String { self == .controller ? "controller" : "controlee" }
}
