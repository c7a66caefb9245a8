import CLibUSB

/// A libusb failure: the call and libusb's error code.
package struct USBError: Error, Equatable, Sendable, CustomStringConvertible {
    package var call: String
    package var code: Int32

    package init(_ call: String, _ code: Int32) {
        self.call = call
        self.code = code
    }

    package var name: String { String(cString: libusb_error_name(code)) }

    package var isAccessDenied: Bool { code == LIBUSB_ERROR_ACCESS.rawValue }
    package var isDeviceGone: Bool { code == LIBUSB_ERROR_NO_DEVICE.rawValue }

    package var isBusy: Bool { code == LIBUSB_ERROR_BUSY.rawValue }

    /// What happened; what to do about it is `Doctor.remedy(for:)`'s business.
    package var description: String {
        let base = "\(call) failed: \(name)"
        switch code {
        case LIBUSB_ERROR_ACCESS.rawValue: return base + " (permission denied)"
        case LIBUSB_ERROR_BUSY.rawValue: return base + " (another program holds the board)"
        case LIBUSB_ERROR_NO_DEVICE.rawValue: return base + " (the board was unplugged)"
        case LIBUSB_ERROR_NOT_FOUND.rawValue:
            return base + " (the board has no such interface, or the kernel driver could not be detached)"
        default: return base
        }
    }

    /// Throws unless `result` is success (0 or a positive count).
    @discardableResult
    static func check(_ call: String, _ result: Int32) throws(USBError) -> Int32 {
        guard result >= 0 else { throw USBError(call, result) }
        return result
    }
}
