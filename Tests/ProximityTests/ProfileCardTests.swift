import Bridge
import Foundation
import PeerProtocol
import Testing

/// `ProfileCard(name:)` takes `--name` as typed: any length, any characters.
@Suite struct ProfileCardTests {
    /// A name far over the card limit, with a short label for the test report.
    struct LongName: Sendable, CustomTestStringConvertible {
        let label: String
        let name: String
        var testDescription: String { label }
    }

    /// Characters of 1 to 25 UTF-8 bytes, combining marks, and JSON escapes.
    static let longNames: [LongName] = [
        LongName(label: "1000 ASCII letters", name: String(repeating: "a", count: 1000)),
        LongName(label: "1000 two-byte letters", name: String(repeating: "é", count: 1000)),
        LongName(label: "1000 emoji", name: String(repeating: "🦊", count: 1000)),
        LongName(label: "200 ZWJ families", name: String(repeating: "👩‍👩‍👧‍👦", count: 200)),
        LongName(label: "300 flags after a letter", name: "x" + String(repeating: "🇫🇷", count: 300)),
        LongName(label: "400 combining accents", name: "ab" + String(repeating: "e\u{301}", count: 400)),
        LongName(label: "escapes", name: String(repeating: "\"\\\n\u{1}/", count: 300)),
        LongName(label: "an emoji across the limit", name: String(repeating: "a", count: 387) + "🦊🦊"),
    ]

    @Test(arguments: longNames) func aLongNameKeepsItsLongestPrefixThatFits(_ long: LongName) throws {
        let name = long.name
        let card = ProfileCard(name: name)
        let kept = try Self.check(card)
        // A prefix of whole Characters: the same scalars as the name's first `kept.count` Characters.
        #expect(name.prefix(kept.count).unicodeScalars.elementsEqual(kept.unicodeScalars))
        #expect(kept.count > 0)
        // The longest: one Character more would not fit.
        let oneMore = String(name.prefix(kept.count + 1))
        #expect(oneMore.count == kept.count + 1)
        #expect(throws: ProfileCard.Invalid.self) { try ProfileCard(json: Self.cardJSON(oneMore)) }
    }

    @Test func aLongASCIINameFillsTheCardExactly() throws {
        let card = ProfileCard(name: String(repeating: "a", count: 1000))
        #expect(card.json.utf8.count == PeerMessage.maxCardBytes)
        #expect(try Self.check(card) == String(repeating: "a", count: PeerMessage.maxCardBytes - #"{"name":""}"#.utf8.count))
    }

    @Test func aNameThatFitsIsKeptWhole() throws {
        #expect(ProfileCard(name: "Alice").json == #"{"name":"Alice"}"#)
        #expect(ProfileCard(name: "").json == #"{"name":""}"#)
        let emoji = String(repeating: "🦊", count: 90)  // 360 bytes + 11
        #expect(try Self.check(ProfileCard(name: emoji)) == emoji)
    }

    /// Every length around the limit, mixing 1- to 4-byte characters and escapes.
    @Test func everyLengthAroundTheLimit() throws {
        let alphabet: [Character] = ["a", "é", "€", "🦊", "\"", "\n", "e\u{301}"]
        for length in 0...450 {
            let name = String((0..<length).map { alphabet[($0 * 7 + length) % alphabet.count] })
            let kept = try Self.check(ProfileCard(name: name))
            #expect(name.prefix(kept.count).unicodeScalars.elementsEqual(kept.unicodeScalars))
            if kept.count < name.count {
                #expect(throws: ProfileCard.Invalid.self) { try ProfileCard(json: Self.cardJSON(String(name.prefix(kept.count + 1)))) }
            }
        }
    }

    /// The card is one line of valid JSON within the limit, with only a name; returns the name.
    static func check(_ card: ProfileCard) throws -> String {
        #expect(card.json.utf8.count <= PeerMessage.maxCardBytes)
        #expect(!card.json.contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(card.json.utf8)) as? [String: Any])
        #expect(object.count == 1)
        return try #require(object["name"] as? String)
    }

    static func cardJSON(_ name: String) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: ["name": name]), as: UTF8.self)
    }
}
