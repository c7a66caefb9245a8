import Testing
import UCI

@testable import NearbyInteractionAccessory

/// Each malformed shareable configuration from issue 33's acceptance list, written from the
/// layout (Apple's Nearby Interaction Accessory Protocol Specification R4; AOSP
/// IosAccessoryConfigurationData.java `AppleUwbConfigData.deserialize`; offsets as in
/// `ShareableConfigurationTests`): exactly one reason, no board command, nothing to the phone,
/// and the session usable afterwards.
@Suite struct AccessorySessionMalformedTests {
    typealias H = AccessorySessionHarness

    static let cases: [(String, [UInt8], ShareableConfigurationError)] = [
        ("truncated", Array(Blobs.version1_1.dropLast()), .truncated(field: "body", needed: 25, available: 24)),
        ("long", Blobs.version1_1 + [0x00], .trailingOctets(1)),
        ("wrong version", Blobs.patched(Blobs.version1_1, at: 0, [0x03, 0x00]), .unsupportedVersion(major: 3, minor: 1)),
        ("channel 7", Blobs.patched(Blobs.version1_1, at: 12, [7]), .unsupportedChannel(7, supported: [5, 9])),
        ("preamble code 3", Blobs.patched(Blobs.version1_1, at: 11, [3]), .unsupportedPreambleCode(3, supported: [9, 10, 11, 12])),
        ("slot duration 1000", Blobs.patched(Blobs.version1_1, at: 15, [0xE8, 0x03]), .slotDuration(1000)),
        ("zero interval", Blobs.patched(Blobs.version1_1, at: 17, [0x00, 0x00]), .zeroRangingInterval),
    ]

    @Test(arguments: cases)
    func malformedBlobGetsOneReasonAndNoCommand(name: String, blob: [UInt8], error: ShareableConfigurationError) {
        var h = H()
        _ = h.phone([0x0A])
        let actions = h.phone([0x0B] + blob)
        #expect(actions == [.log(.malformedConfiguration(error))], "\(name)")
        #expect(h.machine.state == .configurationSent, "\(name)")
        // Still usable: the phone's corrected blob starts the session.
        let retry = h.phone([0x0B] + Blobs.version1_1)
        #expect(H.starts(retry).map(\.sessionID) == [0x1234_5678], "\(name)")
    }

    /// While ranging, a malformed 0x0B leaves the running session alone.
    @Test(arguments: cases)
    func malformedBlobWhileRangingKeepsRanging(name: String, blob: [UInt8], error: ShareableConfigurationError) {
        var h = H()
        _ = h.phone([0x0B] + Blobs.version2_0)
        _ = h.boardStarts(0xDEAD_BEEF)
        let before = h.machine.state
        #expect(h.phone([0x0B] + blob) == [.log(.malformedConfiguration(error))], "\(name)")
        #expect(h.machine.state == before, "\(name)")
    }

    /// Writes that are not messages at all: one reason each, nothing else.
    @Test(arguments: [
        ([], AccessoryMessageError.empty),
        ([0x04], .unknownID(0x04)),
        ([0x0A, 0x00], .unexpectedPayload(.initialize, size: 1)),
        ([0x0C, 0x01, 0x02], .unexpectedPayload(.stop, size: 2)),
        ([0x0B], .missingPayload(.configureAndStart)),
    ] as [([UInt8], AccessoryMessageError)])
    func malformedMessageGetsOneReason(octets: [UInt8], error: AccessoryMessageError) {
        var h = H()
        #expect(h.phone(octets) == [.log(.malformedMessage(error))])
        #expect(h.machine.state == .idle)
    }
}
