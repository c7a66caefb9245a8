import BLE
import GATTServer
import Glibc
import Logging
import StreamIO
import Synchronization
import SystemPackage

/// The kernel-socket GATT backend (issue 33) for an adapter bluetoothd does not serve: listens on
/// the adapter's LE ATT channel (L2CAP CID 4, security LOW, as bluetoothd's own GATT server
/// does) and serves `database` to each client that connects, one `ATTChannel` per link on a
/// thread of its own.
///
/// Start it only where bluetoothd does not run. The kernel does not refuse a second socket bound
/// to CID 4 on the same address (l2cap_add_scid), and a new connection goes to the listener
/// created last, so beside bluetoothd this takes ATT from it (both seen on the VM rig's 6.1
/// kernel, Tests/VMRig/att-kernel.sh); the EADDRINUSE case is for a kernel that does refuse. The kernel offers the channel on every LE link of the
/// adapter (l2cap_connect_cfm), so a link another rig opens for the peer protocol opens one here
/// too; it is served like a phone's.
package final class ATTListener: GATTBackend {
    private struct State {
        var links: [ObjectIdentifier: ATTChannel] = [:]
        /// Links served so far: each link's client is named `att:N` after it.
        var served: UInt64 = 0
        var stopped = false
    }
    /// Owned by the accept thread, which closes it; `stop` only shuts it down.
    private let listener: LinkSocket
    private let state = Mutex(State())
    private let logger: Logger
    private let sink = GATTClientEventSink()

    private init(listener: LinkSocket, logger: Logger) {
        self.listener = listener
        self.logger = logger
    }

    /// Listens on `adapter`'s LE ATT channel; `adapterAddress` is its public address (6 octets,
    /// least significant first, as mgmt reports it). `handler` runs on the links' threads with
    /// every event; the node's share (`GATTClientEvent`s) also goes where `start(events:)` says.
    package static func start(
        adapter: String, adapterAddress: [UInt8], database: GATTDatabase, logger: Logger,
        handler: @escaping @Sendable (ATTLinkEvent) -> Void = { _ in }
    ) throws(BlueZError) -> ATTListener {
        let fd: Int32
        do {
            fd = try L2CAPSocket.makeATT(adapter: adapterAddress)
        } catch {
            throw bindFailure(error, adapter: adapter)
        }
        guard Glibc.listen(fd, 8) == 0 else {
            let code = errno
            close(fd)
            throw .socket(call: "listen(L2CAP cid \(L2CAPSocket.attCID))", errno: code)
        }
        let listener = ATTListener(listener: LinkSocket(FileDescriptor(rawValue: fd)), logger: logger)
        let sink = listener.sink
        listener.acceptOnNewThread(database: database, logger: logger) { event in
            handler(event)
            if let client = event.clientEvent { sink.send(client) }
        }
        return listener
    }

    /// EADDRINUSE from bind says who holds the channel and what to use instead.
    static func bindFailure(_ error: BlueZError, adapter: String) -> BlueZError {
        guard case .socket(let call, EADDRINUSE) = error, call.hasPrefix("bind") else { return error }
        return .attChannelInUse(adapter: adapter)
    }

    private func acceptOnNewThread(database: GATTDatabase, logger: Logger, handler: @escaping @Sendable (ATTLinkEvent) -> Void) {
        IOThread.detach(name: "att-accept") { [self] in
            AcceptLoop.run(
                next: { () -> AcceptOutcome<(Int32, BLEAddress)> in
                    guard !listener.wasShutDown else { return .stopped }
                    switch L2CAPSocket.accept(listener.ownerDescriptor.rawValue) {
                    case .success(let accepted): return .accepted(accepted)
                    case .failure(let error): return listener.wasShutDown ? .stopped : .failed(error)
                    }
                },
                report: { error, inARow, _ in
                    guard inARow == 1 else { return }
                    logger.warning("accepting an ATT connection failed; accepting goes on", metadata: ["error": "\(error)"])
                },
                accepted: { (accepted: (fd: Int32, peer: BLEAddress)) in
                    let number = state.withLock { s in
                        s.served += 1
                        return s.served
                    }
                    let channel = ATTChannel(FileDescriptor(rawValue: accepted.fd), database: database, client: GATTClient("att:\(number)"))
                    serve(channel, peer: accepted.peer, handler: handler)
                })
            listener.close()
        }
    }

    private func serve(_ channel: ATTChannel, peer: BLEAddress, handler: @escaping @Sendable (ATTLinkEvent) -> Void) {
        let key = ObjectIdentifier(channel)
        let admitted = state.withLock { s in
            guard !s.stopped else { return false }
            s.links[key] = channel
            return true
        }
        guard admitted else {
            // Stopped meanwhile: end the link at once (the owner's loop then closes it).
            channel.shutdown()
            return channel.serve { _ in }
        }
        handler(.opened(channel, peer: peer))
        IOThread.detach(name: "att-link") { [self] in
            channel.serve { handler(.client(channel, $0)) }
            state.withLock { _ = $0.links.removeValue(forKey: key) }
            handler(.closed(channel))
        }
    }

    package func start(events: @escaping @Sendable (GATTClientEvent) -> Void) {
        sink.set(events)
    }

    /// Notifies the client on its link, if it is still open and subscribed (else one debug line:
    /// a phone that left, or one that never subscribed, is not the rig's fault).
    package func notify(_ client: GATTClient, characteristic: GATTUUID, value: [UInt8]) {
        guard let channel = state.withLock({ $0.links.values.first { $0.client == client } }) else {
            return logger.debug("notification for a client that is gone", metadata: ["client": "\(client)"])
        }
        do {
            try channel.notify(characteristic, value: value)
        } catch {
            logger.debug("notification not sent", metadata: ["client": "\(client)", "error": "\(error)"])
        }
    }

    /// Stops accepting and ends every link; their threads close the sockets and report
    /// `.closed`.
    package func stop() {
        let links = state.withLock { s in
            s.stopped = true
            return Array(s.links.values)
        }
        for channel in links { channel.shutdown() }
        listener.shutdown()
    }
}
