/// Controller settings bits (Read Controller Information, New Settings).
package struct ControllerSettings: OptionSet, Hashable, Sendable {
    package var rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }
    package static let powered = ControllerSettings(rawValue: 1 << 0)
    package static let connectable = ControllerSettings(rawValue: 1 << 1)
    package static let discoverable = ControllerSettings(rawValue: 1 << 3)
    package static let bredr = ControllerSettings(rawValue: 1 << 7)
    package static let lowEnergy = ControllerSettings(rawValue: 1 << 9)
    package static let advertising = ControllerSettings(rawValue: 1 << 10)
    /// LE privacy: the kernel advertises, scans and connects from resolvable private addresses
    /// it renews on its own schedule (15 minutes by default).
    package static let privacy = ControllerSettings(rawValue: 1 << 13)
}
