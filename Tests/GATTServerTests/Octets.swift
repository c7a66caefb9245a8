@testable import GATTServer

/// Octets written as the Core Specification's tables show them: hex pairs, spaces ignored.
func octets(_ text: String) -> [UInt8] {
    let digits = text.filter { !$0.isWhitespace }
    precondition(digits.count % 2 == 0, "odd hex in a test table")
    return stride(from: 0, to: digits.count, by: 2).map { offset in
        let start = digits.index(digits.startIndex, offsetBy: offset)
        return UInt8(digits[start..<digits.index(start, offsetBy: 2)], radix: 16)!
    }
}

/// The database the bridge offers by default in these tests: Qorvo's NI service, Nordic UART,
/// the attendee token, in that order.
let accessoryDatabase = AccessoryGATTService.database(offering: [.qorvoNearbyInteraction, .nordicUART, .attendeeToken])

// The services' and characteristics' UUIDs as PDUs carry them: the text form's octets reversed
// (Core Specification Vol 3 Part F §3.2.1, little-endian), written out by hand.
let niServiceLE = octets("02 00 12 AC 42 02 EB A1 ED 11 61 6A D0 8F 93 2E")
let niSecureLE = octets("02 00 12 AC 42 02 EB A1 ED 11 61 6A 1C 94 93 2E")
let niRXLE = octets("02 00 12 AC 42 02 EB A1 ED 11 61 6A 8A 99 93 2E")
let niTXLE = octets("02 00 12 AC 42 02 EB A1 ED 11 61 6A F2 9A 93 2E")
let uartServiceLE = octets("9E CA DC 24 0E E5 A9 E0 93 F3 A3 B5 01 00 40 6E")
let uartRXLE = octets("9E CA DC 24 0E E5 A9 E0 93 F3 A3 B5 02 00 40 6E")
let uartTXLE = octets("9E CA DC 24 0E E5 A9 E0 93 F3 A3 B5 03 00 40 6E")
let tokenServiceLE = octets("6E A4 A2 69 BF 10 4F A6 53 40 4D 15 68 16 D4 2E")
let tokenLE = octets("7D 57 92 F4 65 31 26 A8 F1 4E F1 CF D7 65 27 DE")

/// The server's answers that are PDUs, in order.
func sent(_ actions: [ATTServerAction]) -> [[UInt8]] {
    actions.compactMap { if case .send(let pdu) = $0 { pdu } else { nil } }
}
