import Testing
import UCI

@testable import AndroidRangingOOB

/// Every refusal: the specification defines no error message, so each is one typed log line,
/// no board command, nothing to the phone and no change of state.
@Suite struct AndroidOOBResponderRefusalTests {
    typealias H = AndroidOOBResponderHarness

    /// `octets` refused with `reason` in whatever state `h` is in.
    static func expectRefused(_ h: inout H, _ octets: [UInt8], _ reason: AndroidOOBResponderReason) {
        let before = h.machine.state
        #expect(h.phone(octets) == [.log(reason)])
        #expect(h.machine.state == before)
    }

    @Test func malformedWrites() {
        var h = H()
        Self.expectRefused(&h, [], .malformedMessage(.truncated(context: "OOB message", field: "version", needed: 1, available: 0)))
        Self.expectRefused(&h, [0x01, 0x04, 0x01, 0x00], .malformedMessage(.unknownMessageID(0x04)))
        Self.expectRefused(&h, [0x04, 0x00, 0x01, 0x00], .malformedMessage(.unsupportedVersion(4)))
        Self.expectRefused(
            &h, [0x01, 0x00, 0x01],
            .malformedMessage(.truncated(context: "Ranging Capability Request (0x0)", field: "requested technologies", needed: 2, available: 1)))
        Self.expectMalformed(&h, Array(Octets.configurationV1.dropLast()))
    }

    /// `octets` refused as the codec refuses them: one malformed-message log, nothing else.
    static func expectMalformed(_ h: inout H, _ octets: [UInt8]) {
        let before = h.machine.state
        let actions = h.phone(octets)
        #expect(actions.count == 1)
        guard case .log(.malformedMessage) = actions.first else {
            Issue.record("\(actions) is not one malformed-message log")
            return
        }
        #expect(h.machine.state == before)
    }

    @Test func malformedWritesWhileRangingChangeNothing() {
        var h = H()
        h.ranging()
        Self.expectRefused(&h, [0x01, 0x09], .malformedMessage(.unknownMessageID(0x09)))
        Self.expectMalformed(&h, Octets.configurationV1 + [0x00])
        Self.expectMalformed(&h, Array(Octets.configurationV1.prefix(20)))
    }

    @Test func responderMessagesFromThePhone() {
        var h = H()
        Self.expectRefused(&h, Octets.capabilityResponseV1, .responderMessageFromPhone(.capabilityResponse))
        Self.expectRefused(&h, [0x01, 0x03, 0x01, 0x00], .responderMessageFromPhone(.configurationResponse))
        Self.expectRefused(&h, [0x03, 0x08, 0x02], .responderMessageFromPhone(.motionNotification))
    }

    /// A second Configuration while a session starts, ranges or stops: refused, the running one
    /// kept (the phone stops it first).
    @Test func aSecondConfigurationIsRefusedInEveryBusyState() {
        var h = H()
        _ = h.phone(Octets.configurationV1)
        Self.expectRefused(&h, Octets.configurationV3, .configurationWhileBusy(session: H.sessionID))
        _ = h.receive(.boardSessionActive(session: H.sessionID))
        Self.expectRefused(&h, Octets.configurationV1, .configurationWhileBusy(session: H.sessionID))
        _ = h.phone([0x01, 0x06, 0x01, 0x00])
        Self.expectRefused(&h, Octets.configurationV1, .configurationWhileBusy(session: H.sessionID))
    }

    /// `Octets.configurationV1` with the UWB block's octet at `offset` (from the block's
    /// technology id) set to `value`.
    static func configuration(_ offset: Int, _ value: UInt8) -> [UInt8] {
        var octets = Octets.configurationV1
        octets[6 + offset] = value
        return octets
    }

    /// Each field the board checks, changed by hand in the octets: config id (block offset 8),
    /// channel (9), preamble (10), interval (11-12), key length (14, with the block resized).
    @Test func configurationsTheBoardCannotRun() {
        var h = H()
        Self.expectRefused(&h, Self.configuration(8, 2), .refusedConfiguration(.unsupportedConfigID(2, supported: [1])))
        Self.expectRefused(&h, Self.configuration(9, 6), .refusedConfiguration(.unsupportedChannel(6, supported: [5, 9])))
        Self.expectRefused(&h, Self.configuration(10, 25), .refusedConfiguration(.unsupportedPreambleIndex(25, supported: [9, 10, 11, 12])))
        // 96 ms (0x60) is under the board's 120.
        Self.expectRefused(&h, Self.configuration(11, 0x60), .refusedConfiguration(.intervalBelowMinimum(96, minimum: 120)))
        // A 16-octet key: block size 0x23, key length (block offset 14) 16, 8 more key octets.
        var long = Octets.configurationV1
        long[7] = 0x23
        long[6 + 14] = 16
        long.insert(contentsOf: [UInt8](repeating: 0xEE, count: 8), at: 6 + 15 + 8)
        Self.expectRefused(&h, long, .refusedConfiguration(.sessionKeyLength(16, supported: [8])))
        // Session id 0 (block offset 4-7).
        var zero = Octets.configurationV1
        for offset in 4...7 { zero[6 + offset] = 0 }
        Self.expectRefused(&h, zero, .refusedConfiguration(.reservedSessionID))
    }

    /// A Configuration without UWB, and one that configures UWB but starts nothing.
    @Test func configurationsThatDoNotStartUWB() {
        var h = H()
        // Configure BLE RSSI (bit 3) only: block 0x03, size 8, the peer's address.
        let bleOnly: [UInt8] = [0x01, 0x02, 0x08, 0x00, 0x08, 0x00, 0x03, 0x08, 1, 2, 3, 4, 5, 6]
        Self.expectRefused(&h, bleOnly, .refusedConfiguration(.noUWBConfiguration))
        var startNothing = Octets.configurationV1
        startNothing[4] = 0x00
        Self.expectRefused(&h, startNothing, .configurationDoesNotStartUWB)
    }

    /// The log lines carry no key octets: the key's vendor id and IV never appear in them.
    @Test func refusalsNeverLogTheKey() {
        var h = H()
        let reason = H.logs(h.phone(Self.configuration(9, 6)))
        let line = reason.map(\.description).joined()
        #expect(!line.isEmpty)
        #expect(!line.contains("0807") && !line.contains("8, 7, 1"))
    }
}
