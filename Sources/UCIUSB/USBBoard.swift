import CLibUSB
import Glibc

/// A USB device that may be a UWB board, as seen without claiming it.
package struct USBBoard: Sendable, Equatable {
    package var bus: UInt8
    /// Port path below the root hub, e.g. [1, 2] for "1-1.2".
    package var ports: [UInt8]
    package var address: UInt8
    package var vendorID: UInt16
    package var productID: UInt16
    package var manufacturer: String?
    package var product: String?
    package var serial: String?
    /// The CDC-ACM interfaces and the bulk endpoints UCI travels on, from the descriptors.
    package var interfaces: CDCInterfaces?
    /// The known board this matched, or nil for a generic CDC-ACM device.
    package var match: BoardMatch?

    /// "BUS-PORT.PORT", the form `--uwb usb:1-1.2` takes and sysfs uses.
    package var location: String { "\(bus)-" + ports.map(String.init).joined(separator: ".") }

    package var ids: String { hex4(vendorID) + ":" + hex4(productID) }
}

package enum USBBoardError: Error, Equatable, Sendable, CustomStringConvertible {
    case noBoard(candidates: [String])
    case ambiguous([String])
    case notFound(selector: String, seen: [String])

    package var description: String {
        switch self {
        case .noBoard(let candidates) where candidates.isEmpty:
            "no UWB board on USB (nothing with a known id or a CDC-ACM data interface); check the cable and `lsusb`"
        case .noBoard(let candidates):
            "no known UWB board on USB; CDC-ACM devices present: \(candidates.joined(separator: "; ")) — pick one with --uwb usb:BUS-PORT"
        case .ambiguous(let boards):
            "several UWB boards: \(boards.joined(separator: "; ")) — pick one with --uwb usb:BUS-PORT or usb:SERIAL"
        case .notFound(let selector, let seen):
            "no USB board \(selector)" + (seen.isEmpty ? "" : "; seen: \(seen.joined(separator: "; "))")
        }
    }
}

private func hex4(_ value: UInt16) -> String {
    let hex = String(value, radix: 16)
    return String(repeating: "0", count: 4 - hex.count) + hex
}

