import BLEBlueZ
import GATTDBus
import GATTServer
import Logging

/// `run`'s GATT server for phones (`phoneServices` in the config): where bluetoothd owns
/// `org.bluez` on the system bus, the services are registered with it over D-Bus, with an
/// advertisement naming the first of them (two 128-bit UUIDs and the flags are 37 octets, over a
/// legacy advert's 31: bluetoothd 5.66 refused such an advertisement in the VM rig); where it
/// does not, the kernel's LE ATT channel of the adapter is
/// served directly. Either way the node starts the backend and gets the clients' events.
enum PhoneServer {
    /// The backend, and the Generic Access service's name where it serves that service itself
    /// (the kernel ATT backend; bluetoothd serves its own).
    static func start(services: [PhoneTransport], adapter: String, deviceName: String, logger: Logger) throws -> (
        backend: any GATTBackend, deviceName: String?
    ) {
        let bluetoothd: Bool
        do {
            bluetoothd = try BusNameOwner.exists("org.bluez", on: .system)
        } catch {
            logger.notice("no system bus to ask for bluetoothd: serving phones on the kernel's ATT channel", metadata: ["error": "\(error)"])
            bluetoothd = false
        }
        let names = services.map(\.rawValue).joined(separator: ",")
        if bluetoothd {
            logger.notice("phones: registering the GATT services with bluetoothd", metadata: ["adapter": "\(adapter)", "services": "\(names)"])
            let application = try GATTDBusApplication.start(
                on: .system, adapter: adapter, database: PhoneTransport.database(offering: services), advertising: [services[0].serviceUUID],
                logger: logger
            ) { event in
                report(event, adapter: adapter, logger: logger)
            }
            return (application, nil)
        }
        guard let address = BlueZProbe.address(of: adapter) else {
            throw BlueZError.noAdapter(requested: adapter, available: BlueZProbe.adapterNames())
        }
        logger.notice(
            "phones: bluetoothd does not run; serving the GATT services on the kernel's ATT channel (phones must find the rig by its peer advert: no advert names the services)",
            metadata: ["adapter": "\(adapter)", "services": "\(names)"])
        let listener = try ATTListener.start(
            adapter: adapter, adapterAddress: address, database: PhoneTransport.database(offering: services, deviceName: deviceName), logger: logger)
        return (listener, deviceName)
    }

    /// What bluetoothd said about the registration, on stderr.
    private static func report(_ event: GATTDBusEvent, adapter: String, logger: Logger) {
        switch event {
        case .registered(let registration):
            logger.notice("bluetoothd took the phones' \(registration == .application ? "GATT services" : "advertisement")", metadata: ["adapter": "\(adapter)"])
        case .registrationFailed(let registration, let name, let message):
            logger.error(
                "bluetoothd refused the phones' \(registration == .application ? "GATT services" : "advertisement"): phones cannot reach this rig",
                metadata: ["adapter": "\(adapter)", "error": "\(name): \(message)"])
        case .advertisementReleased:
            logger.warning("bluetoothd dropped the advertisement naming the phones' services", metadata: ["adapter": "\(adapter)"])
        case .lost(let why):
            logger.error("the system bus connection failed: phones are no longer served", metadata: ["error": "\(why)"])
        case .client, .disconnected:
            break
        }
    }
}
