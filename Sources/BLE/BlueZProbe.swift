import CBlueZ
import Glibc

/// Checks, through the kernel's Bluetooth socket family, whether an HCI adapter exists.
///
/// The BlueZ backend (mgmt channel, L2CAP CoC) is not built yet; this probe lets `run --ble hciN`
/// say exactly what the machine offers instead of pretending to work.
public enum BlueZProbe {
    public enum Finding: Equatable, Sendable {
        case noKernelSupport(errno: Int32)
        case adapterMissing(String)
        case adapterPresent(String)
    }

    public static func probe(adapter: String) -> Finding {
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard fd >= 0 else { return .noKernelSupport(errno: errno) }
        close(fd)
        return hci_devid(adapter) >= 0 ? .adapterPresent(adapter) : .adapterMissing(adapter)
    }

    public static func explain(_ finding: Finding) -> String {
        switch finding {
        case .noKernelSupport(let code):
            "this kernel has no Bluetooth socket support (socket(AF_BLUETOOTH) failed: \(String(cString: strerror(code))))"
        case .adapterMissing(let name):
            "no Bluetooth adapter named \(name) (check `btmgmt info` and `rfkill list`)"
        case .adapterPresent(let name):
            "adapter \(name) is present, but the BlueZ backend is not implemented in this build yet"
        }
    }
}

extension BlueZProbe {
    /// Adapter names the kernel lists in sysfs (hci0, hci1, ...), whether or not they are up.
    public static func adapterNames() -> [String] {
        guard let directory = opendir("/sys/class/bluetooth") else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix("hci"), !name.contains(":") { names.append(name) }
        }
        return names.sorted()
    }
}
