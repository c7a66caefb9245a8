import Bridge
import Testing

@testable import AndroidRangingOOB

/// Inputs a phone could send by mistake or by malice: every truncation and single-octet change
/// of the spec-layout seeds, and random octets. None may trap; whatever parses must re-encode to
/// the very octets it came from (the codec loses and invents nothing); whatever passes the board
/// check must be inside the board's offer and map to a session. (Before the slot check, a
/// changed slot octet here trapped in the mapping, as the fuzz target found.)
@Suite struct OOBMessageMutationTests {
    /// Returns whether `octets` parsed, after checking what every input must get.
    @discardableResult
    func check(_ octets: [UInt8]) -> Bool {
        guard let message = try? OOBMessage(octets) else { return false }
        #expect(message.encoded == octets, "\(octets.hexString)")
        if case .configuration(let configuration) = message.payload, let uwb = try? Octets.board.validate(configuration) {
            #expect(Octets.board.channels.contains(uwb.channel) && Octets.board.configIDs.contains(uwb.configID))
            // What passes maps (config id 1 is all this board offers): no trap, no refusal.
            #expect(throws: Never.self) { try AndroidSessionConfiguration(uwb, deviceAddress: [0xA1, 0xB2]) }
        }
        return true
    }

    @Test func everyTruncationIsRefused() {
        for seed in Octets.all {
            #expect(check(seed))
            for length in 0..<seed.count {
                #expect(!check(Array(seed.prefix(length))), "\(seed.hexString) cut to \(length)")
            }
        }
    }

    @Test func singleOctetChanges() {
        var parsed = 0
        var total = 0
        for seed in Octets.all {
            for index in seed.indices {
                for value: UInt8 in [0x00, 0x01, 0x02, 0x07, 0x13, 0x80, 0xFF, seed[index] &+ 1] where value != seed[index] {
                    var mutated = seed
                    mutated[index] = value
                    total += 1
                    if check(mutated) { parsed += 1 }
                }
            }
        }
        // Many changes land in free-valued fields (addresses, ids, keys) and parse; the
        // structural ones do not. Both kinds must occur, or the loop tests nothing.
        #expect(parsed > 0 && parsed < total)
    }

    @Test func randomOctets() {
        var generator = SplitMix64(seed: 31)
        for _ in 0..<5000 {
            let count = Int(generator.next() % 48)
            var octets = (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            // Half the time, a valid header so the bodies get exercised too.
            if count >= 2, generator.next() & 1 == 0 {
                octets[0] = UInt8(1 + generator.next() % 3)
                octets[1] = [0, 1, 2, 3, 6, 7, 8][Int(generator.next() % 7)]
            }
            check(octets)
        }
    }
}
