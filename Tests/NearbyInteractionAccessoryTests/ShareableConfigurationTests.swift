import Bridge
import Testing

@testable import NearbyInteractionAccessory

/// The blobs in `Blobs` are written from the spec's layout; offsets below are the layout's
/// (header 0-4, country 5, session id 7, preamble 11, channel 12, slots 13, slot duration 15,
/// interval 17, round control 19, STS IV 20, destination 26, clock drift 28, 2.0's hopping 34).
@Suite struct ShareableConfigurationTests {
    @Test func version1_1FieldByField() throws {
        let parsed = try ShareableConfiguration(parsing: Blobs.version1_1, board: Blobs.board)
        #expect(parsed.version == .v1_1)
        #expect(parsed.countryCode == "US")
        #expect(parsed.sessionID == 0x1234_5678)
        #expect(parsed.preambleCode == 10)
        #expect(parsed.channel == 9)
        #expect(parsed.slotsPerRound == 25)
        #expect(parsed.slotDurationRSTU == 2400)
        #expect(parsed.rangingIntervalMilliseconds == 240)
        #expect(parsed.roundControl == 0x03)
        #expect(parsed.staticSTSIV == [0x01, 0x02, 0x03, 0x04, 0x05, 0x06])
        #expect(parsed.destinationAddress == [0xC4, 0xD3])
        #expect(parsed.maxClockDriftPPM == 20)
        #expect(parsed.hopping == false)
    }

    @Test func version2_0FieldByField() throws {
        let parsed = try ShareableConfiguration(parsing: Blobs.version2_0, board: Blobs.board)
        #expect(parsed.version == .v2_0)
        #expect(parsed.countryCode == "JP")
        #expect(parsed.sessionID == 0xDEAD_BEEF)
        #expect(parsed.preambleCode == 11)
        #expect(parsed.channel == 5)
        #expect(parsed.slotsPerRound == 6)
        #expect(parsed.slotDurationRSTU == 3600)
        #expect(parsed.rangingIntervalMilliseconds == 96)
        #expect(parsed.roundControl == 0x02)
        #expect(parsed.staticSTSIV == [0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5])
        #expect(parsed.destinationAddress == [0x34, 0x12])
        #expect(parsed.maxClockDriftPPM == 200)
        #expect(parsed.hopping == true)
    }

    /// Each malformed blob the issue lists, and each other check, fails with its own error.
    @Test(arguments: [
        // truncated: the last octet missing
        (Array(Blobs.version1_1.dropLast()), ShareableConfigurationError.truncated(field: "body", needed: 25, available: 24)),
        // truncated inside the header
        ([0x01, 0x00, 0x01], .truncated(field: "minor version", needed: 2, available: 1)),
        // long: one octet past the declared length
        (Blobs.version1_1 + [0x00], .trailingOctets(1)),
        // wrong version: 3.1, and 1.0, whose layout no source gives
        (Blobs.patched(Blobs.version1_1, at: 0, [0x03, 0x00]), .unsupportedVersion(major: 3, minor: 1)),
        (Blobs.patched(Blobs.version1_1, at: 2, [0x00, 0x00]), .unsupportedVersion(major: 1, minor: 0)),
        // version 1.1 with 2.0's length
        (Blobs.patched(Blobs.version1_1, at: 4, [30]), .lengthMismatch(version: .v1_1, declared: 30)),
        (Blobs.patched(Blobs.version1_1, at: 5, [0x00, 0x00]), .countryCode([0x00, 0x00])),
        (Blobs.patched(Blobs.version1_1, at: 7, [0, 0, 0, 0]), .reservedSessionID),
        // preamble code 3
        (Blobs.patched(Blobs.version1_1, at: 11, [3]), .unsupportedPreambleCode(3, supported: [9, 10, 11, 12])),
        // channel 7
        (Blobs.patched(Blobs.version1_1, at: 12, [7]), .unsupportedChannel(7, supported: [5, 9])),
        (Blobs.patched(Blobs.version1_1, at: 13, [5, 0]), .slotsPerRound(5)),
        (Blobs.patched(Blobs.version1_1, at: 13, [0, 1]), .slotsPerRound(256)),
        // slot duration 1000 RSTU (0x03E8), and 3000 (at least 2400 but not a multiple of 1200)
        (Blobs.patched(Blobs.version1_1, at: 15, [0xE8, 0x03]), .slotDuration(1000)),
        (Blobs.patched(Blobs.version1_1, at: 15, [0xB8, 0x0B]), .slotDuration(3000)),
        // zero interval
        (Blobs.patched(Blobs.version1_1, at: 17, [0, 0]), .zeroRangingInterval),
        // 25 slots of 2 ms do not fit 40 ms
        (Blobs.patched(Blobs.version1_1, at: 17, [40, 0]), .roundLongerThanInterval(roundMilliseconds: 50, intervalMilliseconds: 40)),
        // contention-based round control
        (Blobs.patched(Blobs.version1_1, at: 19, [0x06]), .roundControl(0x06)),
        (Blobs.patched(Blobs.version2_0, at: 34, [2]), .hoppingMode(2)),
    ])
    func malformedBlobsGetTheirOwnError(blob: [UInt8], error: ShareableConfigurationError) {
        #expect(throws: error) { try ShareableConfiguration(parsing: blob, board: Blobs.board) }
    }

    @Test func hoppingNeedsABoardThatHops() {
        let board = AccessoryCapabilities(channels: [5, 9], hopping: false)
        #expect(throws: ShareableConfigurationError.hoppingUnsupported) {
            try ShareableConfiguration(parsing: Blobs.version2_0, board: board)
        }
        let off = Blobs.patched(Blobs.version2_0, at: 34, [0])
        #expect((try? ShareableConfiguration(parsing: off, board: board))?.hopping == false)
    }

    /// The one log line a malformed blob gets: one sentence that names the field and its value.
    @Test func errorsNameTheFieldAndValue() {
        let errors: [(ShareableConfigurationError, [String])] = [
            (.truncated(field: "body", needed: 25, available: 24), ["truncated", "25", "24"]),
            (.trailingOctets(1), ["1 octets more"]),
            (.unsupportedVersion(major: 3, minor: 1), ["version 3.1"]),
            (.lengthMismatch(version: .v1_1, declared: 30), ["length octet is 30", "1.1", "25"]),
            (.countryCode([0, 0]), ["Country code 0x0000"]),
            (.reservedSessionID, ["Session id 0"]),
            (.unsupportedPreambleCode(3, supported: [9, 10, 11, 12]), ["Preamble code 3", "9, 10, 11, 12"]),
            (.unsupportedChannel(7, supported: [5, 9]), ["Channel 7", "5, 9"]),
            (.slotsPerRound(5), ["Slots per round 5"]),
            (.slotDuration(1000), ["Slot duration 1000 RSTU"]),
            (.zeroRangingInterval, ["Ranging interval 0 ms"]),
            (.roundLongerThanInterval(roundMilliseconds: 50, intervalMilliseconds: 40), ["40 ms", "50 ms"]),
            (.roundControl(6), ["round control 0x06"]),
            (.hoppingMode(2), ["Hopping mode 2"]),
            (.hoppingUnsupported, ["Hopping mode 1"]),
        ]
        for (error, names) in errors {
            for name in names { #expect(error.description.contains(name), "\(error.description)") }
            #expect(error.description.hasSuffix("."))
            #expect(!error.description.contains(". "), "one sentence: \(error.description)")
        }
        #expect(Set(errors.map(\.0.description)).count == errors.count)
    }

    /// Arbitrary octets get a configuration or an error, never a trap (the libFuzzer target
    /// `phone-message` does this at length; this is its quick, seeded cousin).
    @Test func arbitraryOctetsNeverTrap() {
        var generator = SplitMix64(seed: 33)
        for _ in 0..<20_000 {
            let count = Int(generator.next() % 40)
            var blob = (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            if count > 5, generator.next() % 2 == 0 { blob.replaceSubrange(0..<5, with: Blobs.version2_0[0..<5]) }
            _ = try? ShareableConfiguration(parsing: blob, board: Blobs.board)
            _ = try? AccessoryMessage(blob)
        }
    }
}
