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

package struct CDCInterfaces: Sendable, Equatable {
    /// The communication (control) interface, which takes SET_CONTROL_LINE_STATE; some boards have none.
    package var control: UInt8?
    package var data: UInt8
    package var bulkIn: UInt8
    package var bulkOut: UInt8
    package var maxPacketSize: UInt16
}

/// How a known board shows up on USB. The DWM3001CDK's product id is not fixed across
/// firmware builds, so boards are matched by vendor and product string, never by a single PID.
package struct BoardMatch: Sendable, Equatable {
    package var vendorID: UInt16
    package var productContains: String
    package var name: String

    package static let known: [BoardMatch] = [
        BoardMatch(
            vendorID: 0x1915, productContains: "nRF52 USB Product",
            name: "Qorvo DWM3001CDK (nRF52833 native USB, QM33 SDK UCI firmware)"),
        BoardMatch(vendorID: 0x1915, productContains: "DWM3001", name: "Qorvo DWM3001 family"),
        BoardMatch(vendorID: 0x1915, productContains: "QM33", name: "Qorvo QM33 family"),
    ]

    func matches(vendorID: UInt16, product: String?) -> Bool {
        vendorID == self.vendorID && product?.contains(productContains) == true
    }
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

/// Enumerates USB devices and picks boards.
package enum USBBoards {
    /// Every device with a CDC-ACM data interface or a known id, in bus/port order.
    package static func list() throws(USBError) -> [USBBoard] {
        let context = try USBContext.get()
        return try withDeviceList(context) { devices in devices.compactMap(describe) }
            .sorted { $0.bus != $1.bus ? $0.bus < $1.bus : $0.ports.lexicographicallyPrecedes($1.ports) }
    }

    /// The board `selector` names: nil = the only known board; "BUS-PORT" or a serial number.
    package static func select(_ selector: String?, from boards: [USBBoard]) throws(USBBoardError) -> USBBoard {
        let summaries = boards.map(summary)
        if let selector {
            guard let board = boards.first(where: { $0.location == selector || $0.serial == selector }) else {
                throw .notFound(selector: selector, seen: summaries)
            }
            return board
        }
        let known = boards.filter { $0.match != nil }
        switch known.count {
        case 1: return known[0]
        case 0: throw .noBoard(candidates: summaries)
        default: throw .ambiguous(known.map(summary))
        }
    }

    package static func summary(_ board: USBBoard) -> String {
        "usb:\(board.location) \(board.ids) \(board.product ?? "?")" + (board.serial.map { " serial \($0)" } ?? "")
    }

    /// Runs `body` with the current device list; the devices are valid only inside it.
    static func withDeviceList<T>(_ context: USBContext, _ body: ([OpaquePointer]) throws(USBError) -> T) throws(USBError) -> T {
        var list: UnsafeMutablePointer<OpaquePointer?>?
        let count = libusb_get_device_list(context.raw, &list)
        guard count >= 0, let list else { throw USBError("libusb_get_device_list", Int32(count)) }
        defer { libusb_free_device_list(list, 1) }
        return try body((0..<count).compactMap { list[$0] })
    }

    static func describe(_ device: OpaquePointer) -> USBBoard? {
        var descriptor = libusb_device_descriptor()
        guard libusb_get_device_descriptor(device, &descriptor) == 0 else { return nil }
        var portBuffer = [UInt8](repeating: 0, count: 8)
        let depth = libusb_get_port_numbers(device, &portBuffer, Int32(portBuffer.count))
        var board = USBBoard(
            bus: libusb_get_bus_number(device), ports: Array(portBuffer.prefix(Int(max(depth, 0)))),
            address: libusb_get_device_address(device), vendorID: descriptor.idVendor, productID: descriptor.idProduct,
            interfaces: cdcInterfaces(device))
        board.manufacturer = Sysfs.attribute(board.location, "manufacturer")
        board.product = Sysfs.attribute(board.location, "product")
        board.serial = Sysfs.attribute(board.location, "serial")
        board.match = BoardMatch.known.first { $0.matches(vendorID: board.vendorID, product: board.product) }
        guard board.match != nil || board.interfaces != nil else { return nil }
        return board
    }

    /// Finds the CDC data interface (class 0x0A) with one bulk IN and one bulk OUT endpoint, and
    /// the communication interface (class 0x02) beside it. Read from the cached descriptors, so
    /// it works without permission to open the device.
    static func cdcInterfaces(_ device: OpaquePointer) -> CDCInterfaces? {
        var config: UnsafeMutablePointer<libusb_config_descriptor>?
        guard libusb_get_active_config_descriptor(device, &config) == 0, let config else { return nil }
        defer { libusb_free_config_descriptor(config) }
        var control: UInt8?
        var data: CDCInterfaces?
        for i in 0..<Int(config.pointee.bNumInterfaces) {
            let interface = config.pointee.interface[i]
            guard interface.num_altsetting > 0 else { continue }
            let setting = interface.altsetting[0]
            if setting.bInterfaceClass == 0x02, control == nil { control = setting.bInterfaceNumber }
            guard setting.bInterfaceClass == 0x0A, data == nil else { continue }
            var bulkIn: (UInt8, UInt16)?
            var bulkOut: UInt8?
            for e in 0..<Int(setting.bNumEndpoints) {
                let endpoint = setting.endpoint[e]
                guard endpoint.bmAttributes & 0x03 == 0x02 else { continue }  // bulk
                if endpoint.bEndpointAddress & 0x80 != 0 {
                    bulkIn = (endpoint.bEndpointAddress, endpoint.wMaxPacketSize)
                } else {
                    bulkOut = endpoint.bEndpointAddress
                }
            }
            if let bulkIn, let bulkOut {
                data = CDCInterfaces(
                    control: nil, data: setting.bInterfaceNumber, bulkIn: bulkIn.0, bulkOut: bulkOut, maxPacketSize: bulkIn.1)
            }
        }
        data?.control = control
        return data
    }
}

/// Reads USB attributes from sysfs, which needs no permission on the device node (libusb needs
/// an open handle for string descriptors), and other small /proc and /sys files.
package enum Sysfs {
    static func attribute(_ location: String, _ name: String) -> String? {
        read("/sys/bus/usb/devices/\(location)/\(name)")
    }

    /// The kernel driver bound to interface `number`, e.g. "cdc_acm".
    static func driver(_ location: String, interface number: UInt8) -> String? {
        var buffer = [CChar](repeating: 0, count: 512)
        let count = readlink("/sys/bus/usb/devices/\(location):1.\(number)/driver", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let target = String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return target.split(separator: "/").last.map(String.init)
    }

    /// A small text file's content without trailing whitespace; nil if unreadable.
    package static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = Glibc.read(fd, &buffer, buffer.count)
        guard count > 0 else { return nil }
        let text = String(decoding: buffer.prefix(count), as: UTF8.self)
        return text.trimmingCharacters(in: "\n\r ")
    }
}

private func hex4(_ value: UInt16) -> String {
    let hex = String(value, radix: 16)
    return String(repeating: "0", count: 4 - hex.count) + hex
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var scalars = Substring(self)
        while let last = scalars.last, set.contains(last) { scalars.removeLast() }
        while let first = scalars.first, set.contains(first) { scalars.removeFirst() }
        return String(scalars)
    }
}

/// What this process may do with a board, found by opening it without claiming anything.
package struct USBAccess: Sendable, Equatable {
    /// nil when the device can be opened, else why not.
    package var openError: USBError?
    /// Whether a kernel driver (normally `cdc_acm`) is bound to the data interface; nil if unknown.
    package var kernelDriver: String?

    package static func inspect(_ board: USBBoard) -> USBAccess {
        let sysfsDriver = board.interfaces.flatMap { Sysfs.driver(board.location, interface: $0.data) }
        do {
            let context = try USBContext.get()
            return try USBBoards.withDeviceList(context) { devices throws(USBError) -> USBAccess in
                guard let device = devices.first(where: { USBBoards.describe($0)?.location == board.location }) else {
                    throw USBError("find \(board.location)", LIBUSB_ERROR_NO_DEVICE.rawValue)
                }
                var handle: OpaquePointer?
                try USBError.check("libusb_open", libusb_open(device, &handle))
                defer { libusb_close(handle) }
                let active = board.interfaces.map { libusb_kernel_driver_active(handle, Int32($0.data)) } ?? 0
                return USBAccess(openError: nil, kernelDriver: active == 1 ? (sysfsDriver ?? "a kernel driver") : nil)
            }
        } catch {
            return USBAccess(openError: error, kernelDriver: sysfsDriver)
        }
    }
}
