/// SESSION_INIT session type. Open-ended: 2.0 adds phases and vendors add their own.
package struct SessionType: RawRepresentable, Hashable, Sendable {
    package var rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    package static let fiRaRanging = SessionType(rawValue: 0x00)
    package static let rangingAndInBandData = SessionType(rawValue: 0x01)
    package static let dataTransfer = SessionType(rawValue: 0x02)
    package static let ccc = SessionType(rawValue: 0xA0)
    package static let deviceTest = SessionType(rawValue: 0xD0)
}
