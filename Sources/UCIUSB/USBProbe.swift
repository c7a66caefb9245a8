import CLibUSB

/// Asks libusb what USB devices this process can see. The libusb UCI transport itself is not
/// built yet; this lets `run --uwb usb` report facts about the machine rather than pretend.
package enum USBProbe {
    package enum Finding: Equatable, Sendable {
        case unavailable(String)
        case devices(count: Int, libusbVersion: String)
    }

    package static func probe() -> Finding {
        var context: OpaquePointer?
        let status = libusb_init(&context)
        guard status == 0 else {
            return .unavailable("libusb_init failed: \(String(cString: libusb_error_name(status)))")
        }
        defer { libusb_exit(context) }
        var list: UnsafeMutablePointer<OpaquePointer?>?
        let count = libusb_get_device_list(context, &list)
        defer { if list != nil { libusb_free_device_list(list, 1) } }
        let version = libusb_get_version().pointee
        let versionText = "\(version.major).\(version.minor).\(version.micro)"
        guard count >= 0 else {
            return .unavailable("libusb_get_device_list failed: \(String(cString: libusb_error_name(Int32(count))))")
        }
        return .devices(count: count, libusbVersion: versionText)
    }
}
