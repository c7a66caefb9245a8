import CLibUSB
import Glibc

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
