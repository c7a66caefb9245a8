import CLibUSB
import Glibc

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
