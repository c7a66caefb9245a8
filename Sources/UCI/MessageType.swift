/// The 3-bit MT field of every UCI packet header.
package enum MessageType: UInt8, Sendable {
    case data = 0, command = 1, response = 2, notification = 3
}
