import BLE
import Synchronization

/// Passes everything through and records it as pcap link type 201 (H4 with a direction word),
/// so Wireshark shows adverts, links, their L2CAP channels and the peer protocol's SDUs.
///
/// With the kernel's mgmt channel, or the virtual air, no HCI crosses this seam: the records
/// are the bridge's view rendered as the HCI a Linux host and an H4 controller would have
/// carried for it (docs/PROTOCOL.md, "Reading a capture"), not a controller's sniff. Legacy
/// commands: advertising data and enable, scan enable, LE Create Connection (and its Cancel),
/// Disconnect, with Command Status/Complete; events: advertising reports (advertising data and
/// scan response split at an AD boundary), LE Connection Complete, Disconnection Complete.
/// Each link carries one LE credit-based channel (`LEChannelParameters`): its connection
/// request and response on CID 0x0005, SDUs as K-frames on the receiver's CID, one LE Flow
/// Control Credit for each SDU received (the receiver's kernel returning what the SDU used),
/// and the Disconnection Request and Response when it closes. Handles are our link ids. A
/// handle's story ends with one Disconnection Complete (or, for a connection never made, a
/// failed LE Connection Complete): the first of our `disconnect` (reason 0x16, local host) and
/// the adapter's `linkClosed` (0x13, remote user); nothing of that link is recorded after it.
package final class CapturingBLEAdapter: BLEAdapter {
    /// What the capture knows of one link.
    private struct Link {
        var open = false
        /// Our channel request was refused: the LE connection came up, the channel did not.
        var refused = false
        var peer = BLEAddress(bytes: [0, 0, 0, 0, 0, 0])
        /// Each side's CID: a kernel gives the first channel of a new LE link the first
        /// dynamic CID, so with a Linux peer both are 0x0040. Frames go to the receiver's.
        var localCID = LEChannelParameters.firstDynamicCID
        var remoteCID = LEChannelParameters.firstDynamicCID
        /// The last signalling identifier each side's kernel used (1…255, cyclic).
        var ours: UInt8 = 0
        var theirs: UInt8 = 0

        static func next(_ last: inout UInt8) -> UInt8 {
            last = last == 255 ? 1 : last + 1
            return last
        }
    }
    private struct State {
        var links: [LinkID: Link] = [:]
        var advertising = false
        var scanning = false
    }

    private let inner: any BLEAdapter
    private let pcap: PcapWriter
    private let clock: @Sendable () -> Int64
    private let psm: UInt16
    /// Links being connected or open: those whose end is still to come. Packets are written
    /// under this lock, so that each link's records are in the order its state changed.
    private let state = Mutex(State())
    package var backendName: String { inner.backendName }
    package var boundAddresses: Bool { inner.boundAddresses }

    /// `psm` is the one the bridge advertises and connects to (`BridgeConfig.psm`).
    package init(_ inner: any BLEAdapter, pcap: PcapWriter, psm: UInt8, clock: @escaping @Sendable () -> Int64) {
        self.inner = inner
        self.pcap = pcap
        self.psm = UInt16(psm)
        self.clock = clock
    }

    private static let mps = LEChannelParameters.mps
    private static let mtu = LEChannelParameters.receiveMTU
    private static let credits = LEChannelParameters.initialCredits

    /// Writes `packets`, each a direction (true: sent by the host) and an H4 packet.
    private func write(_ packets: [(sent: Bool, h4: [UInt8])]) {
        let now = clock()
        for (sent, h4) in packets { pcap.write(HCIRendering.direction(sent: sent) + h4, microseconds: now) }
    }

    package func start(events: @escaping @Sendable (BLEEvent) -> Void) async throws {
        try await inner.start { [self] event in
            state.withLock { write(record(event, &$0)) }
            events(event)
        }
    }

    private func record(_ event: BLEEvent, _ s: inout State) -> [(sent: Bool, h4: [UInt8])] {
        switch event {
        case .advertisement(let address, let rssi, let data):
            return HCIRendering.advertisingReports(address: address, rssi: rssi, data: data).map { (false, $0) }
        case .linkOpened(let link, let peer, let local):
            var entry = s.links[link] ?? Link()
            entry.open = true
            entry.peer = peer
            defer { s.links[link] = entry }
            return [(false, HCIRendering.connectionComplete(link: link, peer: peer, central: local))]
                + channelOpening(link: link, local: local, &entry)
        case .linkData(let link, let sdu):
            guard var entry = s.links[link], entry.open else { return [] }
            defer { s.links[link] = entry }
            let frames = HCIRendering.kFrames(link: link, sent: false, cid: entry.localCID, sdu: sdu, mps: Int(Self.mps))
            return frames.map { (false, $0) }
                + [(true, credit(link: link, sent: true, cid: entry.localCID, count: frames.count, identifier: Link.next(&entry.ours)))]
        case .linkClosed(let link):
            guard var entry = s.links.removeValue(forKey: link) else { return [] }
            guard entry.open else {
                // The refused channel's LE connection ends when the kernel's idle timer drops it
                // (Connection Terminated by Local Host, Vol 1 Part F §2.23).
                if entry.refused { return [(false, HCIRendering.disconnectionComplete(link: link, reason: 0x16))] }
                // Connection Failed to be Established (Vol 1 Part F §2.62).
                return [(false, HCIRendering.connectionComplete(link: link, peer: entry.peer, central: true, status: 0x3E))]
            }
            let identifier = Link.next(&entry.theirs)
            let cids = HCIRendering.words(entry.localCID, entry.remoteCID)  // DCID: the receiver's
            return [
                (false, HCIRendering.signalling(link: link, sent: false, code: 0x06, identifier: identifier, data: cids)),
                (true, HCIRendering.signalling(link: link, sent: true, code: 0x07, identifier: identifier, data: cids)),
                (false, HCIRendering.disconnectionComplete(link: link, reason: 0x13)),
            ]
        case .connectRefused(let link):
            // The peer's host answered our request with SPSM Not Supported (the kernel's
            // ECONNREFUSED): the LE connection is up, the channel is not.
            guard var entry = s.links[link], !entry.open else { return [] }
            entry.refused = true
            defer { s.links[link] = entry }
            return [(false, HCIRendering.connectionComplete(link: link, peer: entry.peer, central: true))]
                + channelOpening(link: link, local: true, &entry, refused: true)
        case .adapterPowered(let on):
            // Switched off, a controller forgets its advertising and scanning.
            if !on { (s.advertising, s.scanning) = (false, false) }
            return []
        }
    }

    /// The LE Credit Based Connection Request and Response (Vol 3 Part A §4.22, §4.23): the
    /// side that connected asks, both with the same kernel's values; a `refused` request is
    /// answered SPSM Not Supported (result 0x0002, its other fields 0).
    private func channelOpening(link: LinkID, local: Bool, _ entry: inout Link, refused: Bool = false) -> [(sent: Bool, h4: [UInt8])] {
        let identifier = local ? Link.next(&entry.ours) : Link.next(&entry.theirs)
        let (asking, answering) = local ? (entry.localCID, entry.remoteCID) : (entry.remoteCID, entry.localCID)
        let request = HCIRendering.words(psm, asking, Self.mtu, Self.mps, Self.credits)
        let response =
            refused ? HCIRendering.words(0, 0, 0, 0, 0x0002) : HCIRendering.words(answering, Self.mtu, Self.mps, Self.credits, 0x0000)
        return [
            (local, HCIRendering.signalling(link: link, sent: local, code: 0x14, identifier: identifier, data: request)),
            (!local, HCIRendering.signalling(link: link, sent: !local, code: 0x15, identifier: identifier, data: response)),
        ]
    }

    /// LE Flow Control Credit (§4.24): `cid` is the sender's own CID.
    private func credit(link: LinkID, sent: Bool, cid: UInt16, count: Int, identifier: UInt8) -> [UInt8] {
        HCIRendering.signalling(
            link: link, sent: sent, code: 0x16, identifier: identifier, data: HCIRendering.words(cid, UInt16(count)))
    }

    package func advertise(_ data: [UInt8], scanResponse: [UInt8]) async throws {
        state.withLock { s in
            var packets: [(sent: Bool, h4: [UInt8])] = []
            for (opcode, bytes) in [(HCIRendering.leSetAdvertisingData, data), (HCIRendering.leSetScanResponseData, scanResponse)] {
                packets += [(true, HCIRendering.dataCommand(opcode, bytes)), (false, HCIRendering.commandComplete(opcode))]
            }
            if !s.advertising {
                s.advertising = true
                let enable = HCIRendering.leSetAdvertisingEnable
                packets += [(true, HCIRendering.command(enable, [0x01])), (false, HCIRendering.commandComplete(enable))]
            }
            write(packets)
        }
        try await inner.advertise(data, scanResponse: scanResponse)
    }

    package func startScanning() async throws {
        state.withLock { s in
            guard !s.scanning else { return }
            s.scanning = true
            let enable = HCIRendering.leSetScanEnable
            write([(true, HCIRendering.command(enable, [0x01, 0x00])), (false, HCIRendering.commandComplete(enable))])
        }
        try await inner.startScanning()
    }

    package func connect(to peer: BLEAddress) throws -> LinkID {
        state.withLock { _ in write([(true, HCIRendering.createConnection(peer: peer))]) }
        let link: LinkID
        do {
            link = try inner.connect(to: peer)
        } catch {
            state.withLock { _ in write([(false, HCIRendering.commandStatus(HCIRendering.leCreateConnection, status: 0x0C))]) }
            throw error
        }
        state.withLock { s in
            write([(false, HCIRendering.commandStatus(HCIRendering.leCreateConnection))])
            if s.links[link] == nil { s.links[link] = Link(peer: peer) }
        }
        return link
    }

    package func send(_ sdu: [UInt8], on link: LinkID) throws {
        state.withLock { s in
            guard var entry = s.links[link], entry.open else { return }
            let frames = HCIRendering.kFrames(link: link, sent: true, cid: entry.remoteCID, sdu: sdu, mps: Int(Self.mps))
            let returned = credit(link: link, sent: false, cid: entry.remoteCID, count: frames.count, identifier: Link.next(&entry.theirs))
            s.links[link] = entry
            write(frames.map { (true, $0) } + [(false, returned)])
        }
        try inner.send(sdu, on: link)
    }

    package func disconnect(_ link: LinkID) {
        state.withLock { s in
            guard var entry = s.links.removeValue(forKey: link) else { return }
            guard entry.open else {
                // Not yet connected: the attempt is cancelled, and the controller says so with a
                // failed LE Connection Complete (§7.8.13: Unknown Connection Identifier).
                let cancel = HCIRendering.leCreateConnectionCancel
                write([
                    (true, HCIRendering.command(cancel)), (false, HCIRendering.commandComplete(cancel)),
                    (false, HCIRendering.connectionComplete(link: link, peer: entry.peer, central: true, status: 0x02)),
                ])
                return
            }
            let identifier = Link.next(&entry.ours)
            let cids = HCIRendering.words(entry.remoteCID, entry.localCID)  // DCID: the receiver's
            write([
                (true, HCIRendering.signalling(link: link, sent: true, code: 0x06, identifier: identifier, data: cids)),
                (false, HCIRendering.signalling(link: link, sent: false, code: 0x07, identifier: identifier, data: cids)),
                (true, HCIRendering.disconnectCommand(link: link, reason: 0x13)),
                (false, HCIRendering.commandStatus(HCIRendering.disconnect)),
                (false, HCIRendering.disconnectionComplete(link: link, reason: 0x16)),
            ])
        }
        inner.disconnect(link)
    }

    package func stop() async {
        await inner.stop()
    }
}
