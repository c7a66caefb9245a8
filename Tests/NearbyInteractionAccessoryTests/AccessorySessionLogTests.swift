import ByteCoding
import Testing
import UCI

@testable import NearbyInteractionAccessory

/// What the rig logs about a phone's session: never the static STS IV (the phone's STS is derived
/// from it; docs/PROTOCOL.md "Phones") nor a blob's octets, whatever path the session takes.
@Suite struct AccessorySessionLogTests {
    typealias H = AccessorySessionHarness

    /// Blobs.version1_1 (offset 20: the static STS IV) with an IV no other field repeats.
    static let iv: [UInt8] = [0x5E, 0xC2, 0xE7, 0x1F, 0x9A, 0x3B]
    static let blob = Blobs.patched(Blobs.version1_1, at: 20, iv)

    /// Every way the IV's octets could be spelled in a line.
    static let spellings: [String] = {
        let hex: [String] = iv.map { [$0].hexString }
        var forms: [String] = []
        for separator in ["", " ", ":", ", "] {
            let joined: String = hex.joined(separator: separator)
            forms.append(joined)
            forms.append(joined.lowercased())
        }
        let prefixed: [String] = hex.map { "0x" + $0 }
        forms.append(prefixed.joined(separator: ", "))
        let decimal: [String] = iv.map { String($0) }
        forms.append(decimal.joined(separator: ", "))
        // Any two IV octets side by side, in hex.
        for index in 0..<(hex.count - 1) {
            let pair: String = hex[index] + hex[index + 1]
            forms.append(pair)
            forms.append(pair.lowercased())
        }
        return forms
    }()

    /// Every path that logs, with the IV blob wherever a blob goes.
    static func everyLog() -> [String] {
        var lines: [AccessorySessionReason] = []
        func run(_ steps: (inout H) -> [AccessorySessionAction]) {
            var h = H()
            lines += H.logs(steps(&h))
        }
        let id: UInt32 = 0x1234_5678
        // Each malformed variant of the IV blob, idle and ranging.
        let malformed: [[UInt8]] = [
            Array(blob.dropLast()), blob + [0x00], Blobs.patched(blob, at: 0, [0x03, 0x00]), Blobs.patched(blob, at: 4, [30]),
            Blobs.patched(blob, at: 5, [0x00, 0x00]), Blobs.patched(blob, at: 12, [7]), Blobs.patched(blob, at: 11, [3]),
            Blobs.patched(blob, at: 15, [0xE8, 0x03]), Blobs.patched(blob, at: 17, [0, 0]), Blobs.patched(blob, at: 19, [0x06]),
            Blobs.patched(blob, at: 13, [5, 0]), Blobs.patched(blob, at: 17, [40, 0]),
            Blobs.patched(Blobs.patched(Blobs.version2_0, at: 20, iv), at: 34, [2]),
        ]
        for bad in malformed {
            run { $0.phone([0x0B] + bad) }
            run { h in h.phone([0x0B] + Blobs.version2_0) + h.boardStarts(0xDEAD_BEEF) + h.phone([0x0B] + bad) }
        }
        // The IV blob in messages that should carry nothing, or as the accessory's own message.
        run { $0.phone([0x0A] + blob) }
        run { $0.phone([0x01] + blob) }
        run { $0.phone([0x0B] + blob + [UInt8](repeating: 0, count: 260)) }
        // Every session path with the IV blob.
        run { h in h.phone([0x0B] + blob) + h.tick(after: 5_001) + h.tick(after: 5_001) }
        run { h in h.phone([0x0B] + blob) + h.board(id, .idle, .slotLengthNotSupported) }
        run { h in h.phone([0x0B] + blob) + h.board(id, .deinitialized, .sessionKeyNotFound) }
        run { h in h.phone([0x0B] + blob) + h.receive(.boardCommandFailed(session: id, status: .failed)) }
        run { h in h.phone([0x0B] + blob) + h.boardStarts(id) + h.board(id, .idle, .maxRangingRoundRetryCountReached) }
        run { h in h.phone([0x0B] + blob) + h.boardStarts(id) + h.board(id, .deinitialized, .sessionStoppedDueToInbandSignal) }
        run { h in h.phone([0x0B] + blob) + h.boardStarts(id) + h.receive(.boardCommandFailed(session: id, status: .failed)) }
        run { h in h.phone([0x0B] + Blobs.version2_0) + h.boardStarts(0xDEAD_BEEF) + h.phone([0x0B] + blob) }
        run { h in h.phone([0x0B] + blob) + h.boardStarts(id) + h.receive(.phoneDisconnected) }
        run { h in
            h.phone([0x0B] + blob) + h.boardStarts(id) + h.phone([0x0C])
                + h.receive(.boardCommandFailed(session: id, status: .failed)) + h.tick(after: 5_001)
        }
        return lines.map(\.description)
    }

    @Test func logsNeverCarryTheSTSIV() {
        let lines = Self.everyLog()
        // Every kind of reason is among them, so no path is left untried.
        #expect(lines.count >= 40)
        for line in lines {
            for spelling in Self.spellings {
                #expect(!line.contains(spelling), "\(line) spells the IV as \(spelling)")
            }
        }
    }

    /// The check above can fail: a line that did carry the IV is caught.
    @Test func theCheckCatchesAnIV() {
        let leaky = "Refused session with IV \(Self.iv.hexString)."
        #expect(Self.spellings.contains { leaky.contains($0) })
    }

    /// Each reason is one sentence, and names the session by its id.
    @Test func reasonsAreOneSentenceNamingTheSession() {
        let id: UInt32 = 0x0012_ABCD
        let reasons: [AccessorySessionReason] = [
            .boardRefusedStart(session: id, reason: .slotLengthNotSupported),
            .boardDroppedStart(session: id, reason: .sessionKeyNotFound),
            .startCommandFailed(session: id, status: .failed),
            .startTimedOut(session: id, milliseconds: 5_000),
            .boardStoppedRanging(session: id, reason: .maxRangingRoundRetryCountReached),
            .boardDroppedSession(session: id, reason: .sessionStoppedDueToInbandSignal),
            .commandFailedWhileRanging(session: id, status: .rejected),
            .deinitFailed(session: id, status: .failed),
            .stopTimedOut(session: id, milliseconds: 5_000),
            .replacingSession(old: id, new: 7),
            .phoneDisconnected(session: id),
        ]
        for reason in reasons {
            let line = reason.description
            #expect(line.contains("0x0012ABCD"), "\(line)")
            #expect(line.hasSuffix("."))
            #expect(!line.dropLast().contains(". "), "one sentence: \(line)")
        }
        #expect(Set(reasons.map(\.description)).count == reasons.count)
        #expect(AccessorySessionReason.startTimedOut(session: 1, milliseconds: 5_000).description.contains("5000 ms"))
        let refused = AccessorySessionReason.boardRefusedStart(session: 1, reason: .slotLengthNotSupported)
        #expect(refused.description.contains("ERROR_SLOT_LENGTH_NOT_SUPPORTED"))
        #expect(
            AccessorySessionReason.malformedConfiguration(.unsupportedChannel(7, supported: [5, 9])).description
                == "Refused a phone's configure and start (0x0B), no board command sent: Channel 7 is not one the board supports (5, 9).")
        #expect(
            AccessorySessionReason.accessoryMessageFromPhone(.uwbDidStart).description
                == "Refused a phone's UWB did start (0x02) message: only an accessory sends it.")
    }
}
