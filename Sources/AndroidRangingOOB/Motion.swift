/// Version 3's Motion Notification payload (the PDL's `Motion`): how much the responder moved.
package enum Motion: UInt8, CaseIterable, Sendable {
    case notDetected = 0x0
    case slight = 0x1
    case moderate = 0x2
    case large = 0x3
}
