@testable import Bridge
import AndroidRangingOOB
import Events
import GATTServer
import PeerProtocol
import Testing
import UCI

/// Android phones as peers in the node's core (issue 31): Android's ranging OOB messages come in
/// as writes on the rig's OOB service, the phone's configuration goes to the board as one
/// request, its rounds make `range`, `near` and `bump` events marked `"platform": "android"`. The
/// phone's octets are written by hand from the spec's PDL (`oob_packets.pdl`, docs/PROTOCOL.md
/// "Phones — Android"): version, id, little-endian fields; blocks of technology id, size (counting
/// its two header octets) and body.
@Suite struct NodeCoreAndroidPhoneTests {
    /// Version 1 Ranging Capability Request for UWB.
    static let capabilityRequest: [UInt8] = [0x01, 0x00, 0x01, 0x00]
    /// Rig C's version 1 answer: UWB at its address 0x0C0C (little-endian, as UCI carries it),
    /// channel 9 (the only one a board that reports none is taken to have), preambles 9-12,
    /// config id 1, 120 ms, 1 ms, both roles.
    static let capabilityResponse: [UInt8] = [
        0x01, 0x01, 0x01, 0x00,  // v1, Capability Response, UWB
        0x00, 0x14,  // UWB block, size 20
        0x0C, 0x0C,  // the rig's address
        0x00, 0x02, 0x00, 0x00,  // channels: bit 9
        0x00, 0x0F, 0x00, 0x00,  // preamble indexes 9-12: bits 8-11
        0x02, 0x00, 0x00, 0x00,  // config ids: bit 1
        0x78, 0x00,  // 120 ms
        0x01,  // 1 ms
        0x03,  // initiator and responder
    ]
    static let sessionID: UInt32 = 0x0BAD_CAFE

    /// Version 1 Ranging Configuration: configure and start UWB, the phone at 0x3C7A (the
    /// address `NodeCorePhoneTests.round` measures), session
    /// 0x0BADCAFE, config id 1, channel `channel`, preamble 11, 120 ms, 2 ms slots, a static STS
    /// key (vendor id 4C 00, IV 11..66), "DE", the rig a responder and controlee.
    static func configuration(channel: UInt8 = 9) -> [UInt8] {
        [
            0x01, 0x02,  // v1, Ranging Configuration
            0x01, 0x00, 0x01, 0x00,  // configure UWB, start UWB
            0x00, 0x1B,  // UWB block, size 27
            0x7A, 0x3C,  // the phone's address
            0xFE, 0xCA, 0xAD, 0x0B,  // session id
            0x01, channel, 0x0B,  // config id 1, channel, preamble 11
            0x78, 0x00,  // 120 ms
            0x02,  // 2 ms slots
            0x08, 0x4C, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66,  // key length 8, vendor id, STS IV
            0x44, 0x45,  // "DE"
            0x02, 0x02,  // the rig: responder, controlee
        ]
    }

    static let phoneToRig = AndroidOOBGATTService.phoneToRig
    static let rigToPhone = AndroidOOBGATTService.rigToPhone
    static let phone = GATTClient("android-a")

    static func write(_ value: [UInt8], on characteristic: GATTUUID = phoneToRig, by client: GATTClient = phone) -> NodeInput {
        NodeCorePhoneTests.write(client, value, on: characteristic)
    }

    /// A phone's whole visit: capability request → the rig's capability; configuration → one
    /// board session with AOSP's mapping of config id 1; ACTIVE → Configuration Response; rounds
    /// → `range`, `near`, a `bump` the rig decides; Stop Ranging → the session closed, DEINIT →
    /// Stop Ranging Response; gone → `peer.lost`. Every event of the phone says android.
    @Test func anAndroidPhoneIsFoundRangedAndBumps() throws {
        let pair = CorePair()
        let ask = pair.feed(.c, Self.write(Self.capabilityRequest))
        let answers = NodeCorePhoneTests.notified(ask)
        #expect(answers.count == 1)
        #expect(answers.first?.0 == Self.phone && answers.first?.1 == Self.rigToPhone)
        #expect(answers.first?.2 == Self.capabilityResponse)
        let found = NodeCorePhoneTests.events(ask).compactMap { if case .peerFound(let f) = $0 { f } else { nil } }
        let phone = try #require(found.first)
        #expect(found.count == 1 && phone.phone == Event.Phone(platform: .android, token: nil))

        let configure = pair.feed(.c, Self.write(Self.configuration()))
        let open = try #require(NodeCorePhoneTests.opened(configure).first)
        #expect(open.0 == Self.sessionID && open.2.description == phone.peer)
        let tlv = { (id: AppConfigID) in open.1.first { $0.id == id }?.value }
        #expect(tlv(.deviceMacAddress) == [0x0C, 0x0C] && tlv(.dstMacAddress) == [0x7A, 0x3C])
        #expect(tlv(.vendorID) == [0x4C, 0x00] && tlv(.staticSTSIV) == [0x11, 0x22, 0x33, 0x44, 0x55, 0x66])
        #expect(tlv(.deviceType) == [0x00] && tlv(.deviceRole) == [0x00])  // controlee, responder
        #expect(tlv(.channelNumber) == [9] && tlv(.preambleCodeIndex) == [11] && tlv(.slotDuration) == [0x60, 0x09])
        #expect(NodeCorePhoneTests.notified(configure).isEmpty)

        let token: UInt32 = 0x45
        pair.feed(.c, .uwbSessions(.started(open.2, sessionID: Self.sessionID, token: token)))
        let active = pair.feed(.c, NodeCorePhoneTests.status(token, .active))
        #expect(NodeCorePhoneTests.notified(active).map(\.2) == [[0x01, 0x03, 0x01, 0x00]])

        var all: [Event.Body] = []
        let distances: [UInt16] = Array(repeating: 100, count: 10) + [100, 90, 80, 70, 60, 50, 40, 30, 20, 10, 5, 2] + Array(repeating: 0, count: 10)
        for (index, centimetres) in distances.enumerated() {
            pair.advance(100)
            all += NodeCorePhoneTests.events(pair.feed(.c, .tick))
            all += NodeCorePhoneTests.events(pair.feed(.c, .ranges([NodeCorePhoneTests.round(token, centimetres: centimetres, sequence: UInt32(index))])))
        }
        #expect(all.contains { if case .range(let r) = $0 { r.peer == phone.peer } else { false } })
        #expect(all.contains { if case .near(let zone) = $0 { zone.peer == phone.peer } else { false } })
        let bumps = all.compactMap { if case .bump(let b) = $0 { b } else { nil } }
        #expect(bumps.count == 1 && bumps.first?.phone == Event.Phone(platform: .android, token: nil))

        let stop = pair.feed(.c, Self.write([0x01, 0x06, 0x01, 0x00]))
        #expect(stop.contains { if case .closeUWB(let peer) = $0 { peer == open.2 } else { false } })
        #expect(NodeCorePhoneTests.notified(stop).isEmpty)
        let deinit_ = pair.feed(.c, NodeCorePhoneTests.status(token, .deinitialized))
        #expect(NodeCorePhoneTests.notified(deinit_).map(\.2) == [[0x01, 0x07, 0x01, 0x00]])
        // Its session has ended: it is lost while its link stays, and found again by its next
        // message; its link's end then loses it once more.
        let lost = { (effects: [NodeEffect]) in
            NodeCorePhoneTests.events(effects).filter {
                if case .peerLost(let lost) = $0 { lost.peer == phone.peer && lost.reason == .peerEnded } else { false }
            }.count
        }
        #expect(lost(deinit_) == 1)
        let again = pair.feed(.c, Self.write(Self.capabilityRequest))
        #expect(NodeCorePhoneTests.events(again).contains { if case .peerFound(let f) = $0 { f.peer == phone.peer } else { false } })
        #expect(lost(pair.feed(.c, .gatt(.closed(Self.phone)))) == 1)
    }

    /// A phone that leaves while ranging is lost once, when its link ends.
    @Test func aPhoneThatLeavesWhileRangingIsLostOnce() throws {
        let pair = CorePair()
        pair.feed(.c, Self.write(Self.capabilityRequest))
        let open = try #require(NodeCorePhoneTests.opened(pair.feed(.c, Self.write(Self.configuration()))).first)
        pair.feed(.c, .uwbSessions(.started(open.2, sessionID: Self.sessionID, token: 0x47)))
        pair.feed(.c, NodeCorePhoneTests.status(0x47, .active))
        let gone = pair.feed(.c, .gatt(.closed(Self.phone)))
        #expect(gone.contains { if case .closeUWB(let peer) = $0 { peer == open.2 } else { false } })
        var events = NodeCorePhoneTests.events(gone)
        events += NodeCorePhoneTests.events(pair.feed(.c, NodeCorePhoneTests.status(0x47, .deinitialized)))
        #expect(events.count { if case .peerLost = $0 { true } else { false } } == 1)
    }

    /// Refusals reach neither the board nor the phone: a channel the board lacks, an unknown
    /// message id, a truncated message, a responder's message; and a second configuration while
    /// the first session runs.
    @Test func refusedMessagesCommandNoBoard() {
        let pair = CorePair.ranging()
        for refused in [Self.configuration(channel: 5), [0x01, 0x04, 0x01, 0x00], Array(Self.configuration().dropLast()), Self.capabilityResponse] {
            let effects = pair.feed(.c, Self.write(refused))
            #expect(NodeCorePhoneTests.opened(effects).isEmpty && NodeCorePhoneTests.notified(effects).isEmpty)
            #expect(!effects.contains { if case .closeUWB = $0 { true } else { false } })
        }
        #expect(NodeCorePhoneTests.opened(pair.feed(.c, Self.write(Self.configuration()))).count == 1)
        var second = Self.configuration()
        second[10] = 0x99
        let busy = pair.feed(.c, Self.write(second))
        #expect(NodeCorePhoneTests.opened(busy).isEmpty && NodeCorePhoneTests.notified(busy).isEmpty)
        #expect(pair.rangesReach(.c))
    }

    /// An app that writes its attendee token before its first OOB message is an Android phone
    /// with that token; a phone that wrote Apple's messages stays an iPhone when it writes
    /// Android's (ignored).
    @Test func theFirstMessageDecidesThePlatform() throws {
        let pair = CorePair()
        pair.feed(.c, Self.write([0xBE, 0xEF], on: AccessoryGATTService.tokenCharacteristic))
        let found = NodeCorePhoneTests.events(pair.feed(.c, Self.write(Self.capabilityRequest)))
        let android = try #require(found.compactMap { if case .peerFound(let f) = $0 { f } else { nil } }.first)
        #expect(android.phone == Event.Phone(platform: .android, token: "beef"))

        let iphone = GATTClient("iphone")
        #expect(NodeCorePhoneTests.notified(pair.feed(.c, NodeCorePhoneTests.write(iphone, [0x0A]))).count == 1)
        let crossed = pair.feed(.c, Self.write(Self.capabilityRequest, by: iphone))
        #expect(NodeCorePhoneTests.notified(crossed).isEmpty && NodeCorePhoneTests.events(crossed).isEmpty)
    }

    /// Jetpack's parameters (docs/android-jetpack.md): a controller phone at 0x3C7A, session
    /// 0x0BADCAFE, channel 9, preamble 10, automatic (240 ms), 2 ms slots; the rig answers
    /// "accepted" with its address, its role (controlee) and the complex channel at once, opens
    /// the board session as the OOB path would (responder, controlee), and answers its stop with
    /// "stopped" once the board reports DEINIT.
    @Test func aJetpackPhoneGetsTheRigsAddressAndRanges() throws {
        let pair = CorePair()
        let jetpack = AndroidOOBGATTService.jetpack
        let parameters: [UInt8] = [
            0x4A, 0x01, 0x01,  // 'J', layout 1, parameters
            0x7A, 0x3C,  // the phone's address
            0xFE, 0xCA, 0xAD, 0x0B,  // session id
            0x00, 0x00, 0x00, 0x00,  // sub-session id
            0x01, 0x09, 0x0A,  // config type 1, channel 9, preamble 10
            0x01, 0x02, 0x01,  // automatic, 2 ms, the phone a controller
            0x08, 0x4C, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66,  // key length 8, vendor id, STS IV
        ]
        let accepted = pair.feed(.c, Self.write(parameters, on: jetpack))
        let answers = NodeCorePhoneTests.notified(accepted)
        #expect(answers.map(\.1) == [jetpack])
        #expect(answers.first?.2 == [0x4A, 0x01, 0x81, 0x0C, 0x0C, 0x00, 0x09, 0x0A])  // the rig at 0C 0C, controlee, 9, 10
        let found = NodeCorePhoneTests.events(accepted).compactMap { if case .peerFound(let f) = $0 { f } else { nil } }
        #expect(found.first?.phone == Event.Phone(platform: .android, token: nil))
        let open = try #require(NodeCorePhoneTests.opened(accepted).first)
        let tlv = { (id: AppConfigID) in open.1.first { $0.id == id }?.value }
        #expect(open.0 == Self.sessionID && tlv(.dstMacAddress) == [0x7A, 0x3C] && tlv(.deviceMacAddress) == [0x0C, 0x0C])
        #expect(tlv(.deviceType) == [0x00] && tlv(.deviceRole) == [0x00] && tlv(.rangingDuration) == [0xF0, 0x00, 0x00, 0x00])
        #expect(tlv(.preambleCodeIndex) == [10] && tlv(.vendorID) == [0x4C, 0x00])

        pair.feed(.c, .uwbSessions(.started(open.2, sessionID: Self.sessionID, token: 0x46)))
        #expect(NodeCorePhoneTests.notified(pair.feed(.c, NodeCorePhoneTests.status(0x46, .active))).isEmpty)
        let stop = pair.feed(.c, Self.write([0x4A, 0x01, 0x02], on: jetpack))
        #expect(stop.contains { if case .closeUWB(let peer) = $0 { peer == open.2 } else { false } })
        let deinit_ = pair.feed(.c, NodeCorePhoneTests.status(0x46, .deinitialized))
        #expect(NodeCorePhoneTests.notified(deinit_).map(\.2) == [[0x4A, 0x01, 0x82, 0x00]])
    }
}
