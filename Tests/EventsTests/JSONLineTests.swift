import Glibc
import Testing

@testable import Events

@Suite struct JSONLineTests {
    let node = "0123456789abcdef"
    let peer = "fedcba9876543210"

    @Test func rendersEveryTypeWithFixedKeyOrder() {
        let cases: [(Event.Body, String)] = [
            (
                .device(.init(radio: .uwb, state: .ready, backend: "tcp:127.0.0.1:7000", detail: ["uci": "2.0.0", "mac": "1.3.0"])),
                #""radio":"uwb","state":"ready","backend":"tcp:127.0.0.1:7000","detail":{"mac":"1.3.0","uci":"2.0.0"}}"#
            ),
            (.peerFound(.init(peer: peer, name: "Alice", rssi: -61)), #""peer":"fedcba9876543210","name":"Alice","rssi":-61}"#),
            (.peerFound(.init(peer: peer, name: "", rssi: nil)), #""peer":"fedcba9876543210","name":"","rssi":null}"#),
            (
                .range(.init(peer: peer, status: "OK", distance: 1.23456, filtered: nil, rate: nil, nlos: false, azimuth: -12.34, elevation: nil)),
                #""peer":"fedcba9876543210","status":"OK","distance":1.235,"filtered":null,"rate":null,"nlos":false,"azimuth":-12.3,"elevation":null,"rssi":null}"#
            ),
            (
                .range(.init(peer: peer, status: "OK_NEGATIVE_DISTANCE_REPORT", distance: -0.03, filtered: 0, rate: -0.4567, nlos: nil, azimuth: nil, elevation: nil, rssi: -41.5)),
                #""peer":"fedcba9876543210","status":"OK_NEGATIVE_DISTANCE_REPORT","distance":-0.030,"filtered":0.000,"rate":-0.457,"nlos":null,"azimuth":null,"elevation":null,"rssi":-41.5}"#
            ),
            (.near(.init(peer: peer, distance: 0.9, azimuth: nil)), #""peer":"fedcba9876543210","distance":0.900,"azimuth":null}"#),
            (.far(.init(peer: peer, distance: 1.5, azimuth: 45)), #""peer":"fedcba9876543210","distance":1.500,"azimuth":45.0}"#),
            (
                .bump(.init(peer: peer, bumpID: 3, distance: -0.02, cardJSON: #"{"name":"Bob"}"#)),
                #""peer":"fedcba9876543210","bump_id":3,"distance":-0.020,"card":{"name":"Bob"}}"#
            ),
            (
                .peerFound(.init(peer: peer, name: "", rssi: nil, phone: .init(platform: .ios, token: "0a0b"))),
                #""peer":"fedcba9876543210","name":"","rssi":null,"kind":"phone","platform":"ios","token":"0a0b"}"#
            ),
            (
                .bump(.init(peer: peer, bumpID: 1, distance: 0, cardJSON: "{}", phone: .init(platform: .ios, token: nil))),
                #""peer":"fedcba9876543210","bump_id":1,"distance":0.000,"card":{},"decided_by":"rig","kind":"phone","platform":"ios"}"#
            ),
            (.peerLost(.init(peer: peer, reason: .peerEnded)), #""peer":"fedcba9876543210","reason":"peer-ended"}"#),
            (.nearest(.init(peer: peer, distance: 0.4321, band: .near)), #""peer":"fedcba9876543210","distance":0.432,"band":"near"}"#),
            (.nearest(.init(peer: nil, distance: nil, band: nil)), #""peer":null,"distance":null,"band":null}"#),
            (.peerLost(.init(peer: peer, reason: .evicted)), #""peer":"fedcba9876543210","reason":"evicted"}"#),
            (.rough(.init(peer: peer, rssi: -71, band: .medium)), #""peer":"fedcba9876543210","rssi":-71,"band":"medium"}"#),
            (
                .stats(.init(peers: 1000, ranging: 8, budget: 8, shedRanges: 12, shedInputs: 0, evicted: 3)),
                #""peers":1000,"ranging":8,"budget":8,"shed_ranges":12,"shed_inputs":0,"evicted":3}"#
            ),
            (
                .stats(.init(peers: 40, ranging: 8, budget: 8, shedRanges: 0, shedInputs: 0, evicted: 0, air: .init(roundFailurePercent: 31, full: true))),
                #""peers":40,"ranging":8,"budget":8,"shed_ranges":0,"shed_inputs":0,"evicted":0,"round_failure_percent":31,"air_full":true}"#
            ),
        ]
        for (body, tail) in cases {
            let line = JSONLine.render(Event(node: node, body: body), seq: 7, timestampMilliseconds: 1_700_000_000_123)
            let type = Event(node: node, body: body).type
            #expect(
                line == #"{"v":1,"seq":7,"ts":"2023-11-14T22:13:20.123Z","type":""# + type + #"","node":"0123456789abcdef","# + tail + "\n")
        }
    }

    /// Reference values computed independently (`date -u -d @SECONDS`).
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (Int64(951_782_400_000), "2000-02-29T00:00:00.000Z"),
        (Int64(1_700_000_000_123), "2023-11-14T22:13:20.123Z"),
        (Int64(4_102_444_799_999), "2099-12-31T23:59:59.999Z"),
        (Int64(-1), "1969-12-31T23:59:59.999Z"),
    ])
    func isoTimestamps(milliseconds: Int64, expected: String) {
        #expect(ISO8601.string(millisecondsSinceEpoch: milliseconds) == expected)
    }

    @Test func escapesControlCharactersSoALineStaysOneLine() {
        let body = Event.Body.peerFound(.init(peer: peer, name: "a\"b\\c\nd\u{01}é", rssi: nil))
        let line = JSONLine.render(Event(node: node, body: body), seq: 1, timestampMilliseconds: 0)
        #expect(line.contains(#""name":"a\"b\\c\nd\u0001é""#))
        #expect(line.filter { $0 == "\n" }.count == 1)
        #expect(line.last == "\n")
    }

    /// Each character that needs an escape, alone in its value: a value without any is copied
    /// whole, so each must send its value the slow way by itself.
    @Test(arguments: [("x\"y", #""x\"y""#), ("x\\y", #""x\\y""#), ("x\ty", #""x\ty""#), ("\u{1F}", #""\u001f""#), ("e0ab", #""e0ab""#), ("", #""""#)])
    func eachEscapeAloneInAValue(value: String, quoted: String) {
        #expect(JSONObjectWriter.quoted(value) == quoted)
    }

    @Test func fixedPointRoundsHalfAwayFromZeroAndDropsNegativeZero() {
        #expect(JSONObjectWriter.fixed(0.0005, decimals: 3) == "0.001")
        #expect(JSONObjectWriter.fixed(-0.0004, decimals: 3) == "0.000")
        #expect(JSONObjectWriter.fixed(-1.25, decimals: 1) == "-1.3")
        #expect(JSONObjectWriter.fixed(655.35, decimals: 3) == "655.350")
    }
}

import Synchronization
