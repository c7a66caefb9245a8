import Testing
import UCI

/// "20 02 00 00" -> [0x20, 0x02, 0x00, 0x00]; test vectors read like the sources they cite.
func bytes(_ hex: String) -> [UInt8] {
    hex.split(whereSeparator: { $0 == " " || $0 == "\n" }).map { UInt8($0, radix: 16)! }
}

/// Decodes wire bytes that must hold exactly one message and nothing else.
func decodeWire(_ wire: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws -> UCIMessage {
    var decoder = UCIStreamDecoder()
    decoder.append(wire)
    let message = try #require(try decoder.next(), sourceLocation: sourceLocation)
    #expect(try decoder.next() == nil, sourceLocation: sourceLocation)
    #expect(decoder.discardedByteCount == 0, sourceLocation: sourceLocation)
    return message
}

/// Both directions against published bytes: our encoder produces them, our decoder reads them back.
func checkCommand(_ command: UCICommand, _ wire: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    #expect(command.message.encoded() == bytes(wire), sourceLocation: sourceLocation)
    #expect(try UCICommand(decodeWire(bytes(wire), sourceLocation: sourceLocation)) == command, sourceLocation: sourceLocation)
}

func checkResponse(_ response: UCIResponse, _ wire: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    #expect(response.message.encoded() == bytes(wire), sourceLocation: sourceLocation)
    #expect(try UCIResponse(decodeWire(bytes(wire), sourceLocation: sourceLocation)) == response, sourceLocation: sourceLocation)
}

func checkNotification(
    _ notification: UCINotification, _ wire: String, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    #expect(notification.message.encoded() == bytes(wire), sourceLocation: sourceLocation)
    #expect(
        try UCINotification(decodeWire(bytes(wire), sourceLocation: sourceLocation)) == notification,
        sourceLocation: sourceLocation)
}

/// Tiny deterministic PRNG (SplitMix64) so fuzz runs are reproducible from a seed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
