import CLibUSB
import Synchronization

/// Counts USB device arrivals reported by libusb's hotplug support, so a reconnect can try the
/// moment a board appears; without hotplug support `shared` is nil and callers poll.
///
/// Debian's libusb learns about devices from udevd's events, which also refresh the list
/// `libusb_get_device_list` returns: without udevd (a bare container) a replugged board is not
/// seen until the process restarts. Rigs run udevd; the VM rig relays the kernel's events in
/// udevd's format (Tests/VMRig/udev_relay.c).
final class USBArrivals: Sendable {
    private let arrivals = Atomic<UInt64>(0)

    static let shared: USBArrivals? = {
        guard libusb_has_capability(UInt32(LIBUSB_CAP_HAS_HOTPLUG.rawValue)) != 0, let context = try? USBContext.get() else {
            return nil
        }
        let arrivals = USBArrivals()
        var handle = libusb_hotplug_callback_handle()
        let status = libusb_hotplug_register_callback(
            context.raw, Int32(LIBUSB_HOTPLUG_EVENT_DEVICE_ARRIVED.rawValue), LIBUSB_HOTPLUG_NO_FLAGS,
            LIBUSB_HOTPLUG_MATCH_ANY, LIBUSB_HOTPLUG_MATCH_ANY, LIBUSB_HOTPLUG_MATCH_ANY,
            { _, _, _, userData in
                Unmanaged<USBArrivals>.fromOpaque(userData!).takeUnretainedValue().arrivals.add(1, ordering: .releasing)
                return 0  // stay registered
            }, Unmanaged.passRetained(arrivals).toOpaque(), &handle)
        return status == 0 ? arrivals : nil
    }()

    var count: UInt64 { arrivals.load(ordering: .acquiring) }
}

extension USBBoards {
    /// Opens the board `selector` names as soon as it is present: at once if it is there,
    /// otherwise when libusb reports an arrival (or at the next poll without hotplug), giving up
    /// after `patience`.
    package static func open(_ selector: String, patience: Duration = .seconds(2)) async throws -> USBTransport {
        let deadline = ContinuousClock.now + patience
        var lastArrivals = USBArrivals.shared?.count
        while true {
            do {
                return try USBTransport.open(select(selector, from: list()))
            } catch where ContinuousClock.now < deadline {
                if let arrivals = USBArrivals.shared {
                    while arrivals.count == lastArrivals, ContinuousClock.now < deadline {
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    lastArrivals = arrivals.count
                } else {
                    try await Task.sleep(for: .milliseconds(250))
                }
            }
        }
    }
}
