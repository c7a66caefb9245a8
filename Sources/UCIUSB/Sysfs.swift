import Glibc

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

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var scalars = Substring(self)
        while let last = scalars.last, set.contains(last) { scalars.removeLast() }
        while let first = scalars.first, set.contains(first) { scalars.removeFirst() }
        return String(scalars)
    }
}
