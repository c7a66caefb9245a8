import BLE
import ByteCoding
import GATTServer
import Synchronization

/// Passes a rig's GATT backend through and records its phones' traffic in the node's `ble.pcap`
/// beside the peer links, as the ATT PDUs (Core Specification Vol 3 Part F) a controller would
/// have carried on the LE ATT channel (CID 0x0004) of each phone's connection: the phone's Write
/// Request (or Write Command) and our Write Response, its write of a characteristic's client
/// configuration, its Handle Value Confirmation, our Handle Value Notification. A phone's
/// connection is rendered from its first event (LE Connection Complete, the rig as peripheral,
/// then the MTU exchange) to its close (Disconnection Complete, remote user), on handles
/// 0x0E00–0x0EFF, which peer links never use (`HCIRendering.handle`). The node sees neither the
/// phone's address nor the MTU exchange: the capture gives the phone a placeholder static random
/// address, C0:00:00:00:0E:nn, and renders the exchange with the Client Rx MTU its platform asks
/// for, told by the service of its first event: 517 on the Android service (Android apps call
/// `requestMtu(517)`, docs/PROTOCOL.md), else 185 (what iPhones are commonly reported to ask
/// for), answered with our servers' 517 (`ATTServer.maximumMTU`).
package final class CapturingGATTBackend: GATTBackend {
    private struct State {
        var links: [GATTClient: LinkID] = [:]
        var opened: UInt8 = 0
    }

    private let inner: any GATTBackend
    private let database: GATTDatabase
    private let pcap: PcapWriter
    private let clock: @Sendable () -> Int64
    private let state = Mutex(State())

    static let attCID: UInt16 = 0x0004
    static let iPhoneMTU: UInt16 = 185
    static let androidMTU: UInt16 = 517

    package init(_ inner: any GATTBackend, database: GATTDatabase, pcap: PcapWriter, clock: @escaping @Sendable () -> Int64) {
        self.inner = inner
        self.database = database
        self.pcap = pcap
        self.clock = clock
    }

    package func start(events: @escaping @Sendable (GATTClientEvent) -> Void) {
        inner.start { [self] event in
            state.withLock { write(record(event, &$0)) }
            events(event)
        }
    }

    package func notify(_ client: GATTClient, characteristic: GATTUUID, value: [UInt8]) {
        state.withLock { s in
            guard let link = s.links[client], let found = database.characteristic(characteristic) else { return }
            var pdu: [UInt8] = [0x1B]
            pdu.appendLE(found.valueHandle)
            write([(true, HCIRendering.acl(link: link, sent: true, cid: Self.attCID, payload: pdu + value))])
        }
        inner.notify(client, characteristic: characteristic, value: value)
    }

    package func stop() {
        inner.stop()
    }

    /// The Client Rx MTU rendered for a phone whose first event is `action`: by the service of
    /// the characteristic it touched.
    private func clientMTU(firstAction action: ATTServerAction) -> UInt16 {
        let characteristic: GATTUUID? =
            switch action {
            case .write(let characteristic, _, _, _), .subscription(let characteristic, _), .indicationConfirmed(let characteristic):
                characteristic
            case .send: nil
            }
        let service = characteristic.flatMap { database.characteristic($0)?.service }
        return service == AndroidOOBGATTService.serviceUUID ? Self.androidMTU : Self.iPhoneMTU
    }

    private func write(_ packets: [(sent: Bool, h4: [UInt8])]) {
        let now = clock()
        for (sent, h4) in packets { pcap.write(HCIRendering.direction(sent: sent) + h4, microseconds: now) }
    }

    private func record(_ event: GATTClientEvent, _ s: inout State) -> [(sent: Bool, h4: [UInt8])] {
        switch event {
        case .closed(let client):
            guard let link = s.links.removeValue(forKey: client) else { return [] }
            return [(false, HCIRendering.disconnectionComplete(link: link, reason: 0x13))]
        case .client(let client, let action):
            var packets: [(sent: Bool, h4: [UInt8])] = []
            let link: LinkID
            if let known = s.links[client] {
                link = known
            } else {
                s.opened = s.opened == 0xFF ? 1 : s.opened + 1
                link = HCIRendering.phoneLink(s.opened)
                s.links[client] = link
                let peer = BLEAddress(bytes: [s.opened, 0x0E, 0, 0, 0, 0xC0])
                packets.append((false, HCIRendering.connectionComplete(link: link, peer: peer, central: false)))
                var request: [UInt8] = [0x02]
                request.appendLE(clientMTU(firstAction: action))
                var response: [UInt8] = [0x03]
                response.appendLE(UInt16(ATTServer.maximumMTU))
                packets.append((false, HCIRendering.acl(link: link, sent: false, cid: Self.attCID, payload: request)))
                packets.append((true, HCIRendering.acl(link: link, sent: true, cid: Self.attCID, payload: response)))
            }
            func received(_ pdu: [UInt8]) { packets.append((false, HCIRendering.acl(link: link, sent: false, cid: Self.attCID, payload: pdu))) }
            func answered(_ pdu: [UInt8]) { packets.append((true, HCIRendering.acl(link: link, sent: true, cid: Self.attCID, payload: pdu))) }
            switch action {
            case .write(_, let valueHandle, let value, let withResponse):
                var pdu: [UInt8] = [withResponse ? 0x12 : 0x52]
                pdu.appendLE(valueHandle)
                received(pdu + value)
                if withResponse { answered([0x13]) }
            case .subscription(let characteristic, let configuration):
                guard let descriptor = database.characteristic(characteristic)?.configurationHandle else { return packets }
                var pdu: [UInt8] = [0x12]
                pdu.appendLE(descriptor)
                pdu.appendLE(configuration.rawValue)
                received(pdu)
                answered([0x13])
            case .indicationConfirmed:
                received([0x1E])
            case .send:
                break
            }
            return packets
        }
    }
}
