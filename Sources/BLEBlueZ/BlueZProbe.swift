import CBlueZ
import Glibc

/// Checks, through the kernel's Bluetooth socket family, whether an HCI adapter exists, without
/// privileges and without touching the adapter: `devices` and `doctor` use it to say what the
/// machine offers before anything opens the management channel (`BlueZAdapter`, `run --ble hciN`).
package enum BlueZProbe {
    package enum Finding: Equatable, Sendable {
        case noKernelSupport(errno: Int32)
        case adapterMissing(String)
        case adapterPresent(String)
    }

    package static func probe(adapter: String) -> Finding {
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard fd >= 0 else { return .noKernelSupport(errno: errno) }
        close(fd)
        return deviceInfo(adapter) != nil ? .adapterPresent(adapter) : .adapterMissing(adapter)
    }

    /// The kernel's device info of `hciN` (HCIGETDEVINFO), up or down. Not libbluetooth's
    /// `hci_devid`: it answers -1 for an adapter that is down (its `hci_devba` wants it up), as
    /// one is before anything powers it on where bluetoothd does not run.
    private static func deviceInfo(_ adapter: String) -> hci_dev_info? {
        guard adapter.hasPrefix("hci"), let index = Int32(adapter.dropFirst(3)), index >= 0 else { return nil }
        var info = hci_dev_info()
        return hci_devinfo(index, &info) == 0 ? info : nil
    }

    package static func explain(_ finding: Finding) -> String {
        switch finding {
        case .noKernelSupport(let code):
            "this kernel has no Bluetooth socket support (socket(AF_BLUETOOTH) failed: \(String(cString: strerror(code))))"
        case .adapterMissing(let name):
            "no Bluetooth adapter named \(name) (check `btmgmt info` and `rfkill list`)"
        case .adapterPresent(let name):
            "adapter \(name) is present: use it with `run --ble \(name)` (`doctor` checks its power, rfkill and CAP_NET_ADMIN)"
        }
    }
}

extension BlueZProbe {
    /// Adapter names the kernel lists in sysfs (hci0, hci1, ...), whether or not they are up.
    package static func adapterNames() -> [String] {
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

extension BlueZProbe {
    /// The adapter's public address (6 octets, least significant first, as mgmt reports it) from
    /// the kernel's device info (HCIGETDEVINFO: no privileges, up or down); nil if there is no
    /// such adapter.
    package static func address(of adapter: String) -> [UInt8]? {
        deviceInfo(adapter).map { info in withUnsafeBytes(of: info.bdaddr.b) { Array($0) } }
    }
}
