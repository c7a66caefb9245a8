import BLEBlueZ
import BlueZMgmt
import Glibc
import StreamIO
import UCIHost
import UCIUSB

/// How to fix what went wrong: the one place that knows, for the checks below and for the errors
/// a radio throws when it is opened. Errors themselves only say what happened.
extension Doctor {
    /// What to do about `error`, when this is a failure a user can fix (a permission, a blocked
    /// radio, another program in the way, a missing device); nil for anything else. Looks through
    /// `UCIHostError.transport` to the transport's own error.
    package static func remedy(for error: any Error) -> String? {
        switch error {
        case let error as UCIHostError:
            return error.underlying.flatMap(remedy(for:))
        case let failure as TransportFailure:
            return remedy(for: failure.error)
        case let error as TransportError:
            guard case .openDevice(_, let code) = error else { return nil }
            switch code {
            case EACCES, EPERM: return Remedy.boardAccess
            case ENOENT, ENODEV, ENXIO: return Remedy.plugTheBoardIn
            case EBUSY: return Remedy.portBusy
            default: return nil
            }
        case let error as USBError:
            if error.isAccessDenied { return Remedy.boardAccess }
            if error.isBusy { return Remedy.boardBusy }
            return nil
        case let error as BlueZError:
            switch error {
            case .command(_, .permissionDenied): return Remedy.netAdmin
            case .command(_, .rfkilled): return Remedy.rfkill
            case .command(.startDiscovery, .busy), .command(.stopDiscovery, .busy): return Remedy.discoveryBusy
            case .command(_, .notPowered): return Remedy.powerOn
            case .noAdapter(_, let available) where available.isEmpty: return Remedy.noAdapter
            case .noAdapter(_, let available): return "use one of the adapters the kernel lists: \(available.joined(separator: ", "))"
            case .noKernelSupport: return Remedy.kernelBluetooth
            default: return nil
            }
        default:
            return nil
        }
    }
}

/// The fixes, worded once.
enum Remedy {
    static let udevRules =
        "sudo install -m 0644 udev/70-nearby-bridge.rules /etc/udev/rules.d/ && sudo udevadm control --reload && sudo udevadm trigger"
    static let joinGroup = "sudo usermod -aG nearby $USER, then log in again"
    static let boardAccess =
        "install the udev rules (udev/70-nearby-bridge.rules: \(udevRules)) and join the `nearby` group (\(joinGroup)); see udev/README.md"
    static let plugTheBoardIn = "is the board plugged in? `ls /dev/ttyACM*` lists its port"
    static let portBusy = "another program holds the port (a serial terminal, ModemManager, another nearby-bridge?): stop it and retry"
    static let boardBusy = "another program holds the board (a serial terminal, ModemManager, another nearby-bridge?): stop it and retry"
    static let netAdmin =
        "grant CAP_NET_ADMIN for the Bluetooth management channel: sudo setcap cap_net_admin+ep $(command -v nearby-bridge)  (or use the systemd unit, which grants it)"
    static let rfkill = "rfkill unblock bluetooth"
    static let discoveryBusy =
        "another program is discovering on this adapter (bluetoothd for one of its clients, or `bluetoothctl scan on`): stop that scan (`bluetoothctl scan off`) and retry"
    static let powerOn = "power the adapter on (`bluetoothctl power on`) and check `rfkill list`"
    static let noAdapter =
        "the kernel lists no Bluetooth adapter: check `rfkill list` and the adapter's cable or USB port; on a Raspberry Pi check that `dtoverlay=disable-bt` is not set and hciuart.service runs"
    static let kernelBluetooth =
        "use a kernel with Bluetooth (CONFIG_BT, CONFIG_BT_LE); on Raspberry Pi OS it is built in; in a container, run on the host"
}
