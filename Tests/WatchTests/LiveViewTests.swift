import Events
import Testing

@testable import Watch

/// The live view from event lines as `run` writes them (schema v1), at an explicit stream time.
@Suite struct LiveViewTests {
    static let rig = "00000000000000aa"
    static let alice = "00000000000000b1"
    static let lines = [
        #"{"v":1,"seq":1,"ts":"2026-01-01T00:00:00.000Z","type":"device","node":"00000000000000aa","radio":"uwb","state":"ready","backend":"tcp:127.0.0.1:7000","detail":{}}"#,
        #"{"v":1,"seq":2,"ts":"2026-01-01T00:00:00.010Z","type":"device","node":"00000000000000aa","radio":"ble","state":"ready","backend":"hci0","detail":{}}"#,
        #"{"v":1,"seq":3,"ts":"2026-01-01T00:00:01.000Z","type":"peer.found","node":"00000000000000aa","peer":"00000000000000b1","name":"alice","rssi":-60}"#,
        #"{"v":1,"seq":4,"ts":"2026-01-01T00:00:02.000Z","type":"range","node":"00000000000000aa","peer":"00000000000000b1","status":"OK","distance":0.52,"filtered":0.50,"rate":0.9,"nlos":false,"azimuth":null,"elevation":null}"#,
        #"{"v":1,"seq":5,"ts":"2026-01-01T00:00:02.100Z","type":"near","node":"00000000000000aa","peer":"00000000000000b1","distance":0.50,"azimuth":null}"#,
        #"{"v":1,"seq":6,"ts":"2026-01-01T00:00:03.000Z","type":"bump","node":"00000000000000aa","peer":"00000000000000b1","bump_id":1,"distance":0.04,"card":{"name":"Alice"}}"#,
        #"{"v":1,"seq":7,"ts":"2026-01-01T00:00:03.000Z","type":"teleport","node":"00000000000000aa","peer":"00000000000000b1","to":"mars"}"#,
        "not json at all",
        #"{"v":1,"seq":8,"ts":"2026-01-01T00:00:04.000Z","type":"stats","node":"00000000000000aa","peers":1,"ranging":1,"budget":4,"shed_ranges":7,"shed_inputs":2,"evicted":0}"#,
    ]
    /// A later `stats` of a rig whose air is full.
    static let fullAir =
        #"{"v":1,"seq":9,"ts":"2026-01-01T00:00:14.000Z","type":"stats","node":"00000000000000aa","peers":40,"ranging":8,"budget":8,"shed_ranges":0,"shed_inputs":0,"evicted":0,"round_failure_percent":31,"air_full":true}"#
    static let start: Int64 = 1_767_225_600_000

    static func view(_ lines: [String] = lines) -> LiveView {
        var view = LiveView()
        for line in lines { view.apply(line) }
        return view
    }

    @Test func eventsBuildTheRigAndItsPeers() throws {
        let view = Self.view()
        let rig = try #require(view.rigs[Self.rig])
        #expect(rig.uwb == "ready (tcp:127.0.0.1:7000)")
        #expect(rig.ble == "ready (hci0)")
        let alice = try #require(rig.peers[Self.alice])
        #expect(alice.name == "alice")
        #expect(alice.distance == 0.04)  // the filtered distance, near's, then the bump's
        #expect(alice.isNear && alice.ranged)
        #expect(alice.lastBump == .init(id: 1, at: Self.start + 3_000, card: "Alice"))
        #expect(rig.shedRanges == 7 && rig.shedInputs == 2)
        // The unknown type was taken and ignored; the line that is not JSON was counted.
        #expect(view.lines == 9 && view.unreadable == 1)
        #expect(view.latest == Self.start + 4_000)
    }

    /// `stats` without the air's fields leave the rig's air unknown; one with them is shown on
    /// the rig's line.
    @Test func theRigsAirIsWhatItsLastStatsSaid() throws {
        #expect(Self.view().rigs[Self.rig]?.roundFailurePercent == nil)
        #expect(!Self.view().screen(width: 120, height: 20, now: Self.start + 5_000, highlight: 0, styled: false).joined().contains("air"))
        let view = Self.view(Self.lines + [Self.fullAir])
        let rig = try #require(view.rigs[Self.rig])
        #expect(rig.roundFailurePercent == 31 && rig.airFull == true)
        let screen = view.screen(width: 120, height: 20, now: Self.start + 15_000, highlight: 0, styled: false)
        #expect(screen.contains { $0.hasPrefix("rig 00000000000000aa") && $0.hasSuffix("air 31 % of rounds failed, full") })
    }

    @Test func aLostPeerSaysWhyAndComesBackWhenHeardAgain() throws {
        var view = Self.view()
        view.apply(#"{"v":1,"seq":9,"ts":"2026-01-01T00:00:09.000Z","type":"peer.lost","node":"00000000000000aa","peer":"00000000000000b1","reason":"timeout"}"#)
        #expect(view.rigs[Self.rig]?.peers[Self.alice]?.lost == "timeout")
        view.apply(#"{"v":1,"seq":10,"ts":"2026-01-01T00:00:10.000Z","type":"peer.found","node":"00000000000000aa","peer":"00000000000000b1","name":"alice","rssi":-70}"#)
        #expect(view.rigs[Self.rig]?.peers[Self.alice]?.lost == nil)
    }

    /// 80×24: every line fits, the peer row shows name, distance, bar, zone and the bump; the
    /// fresh bump's row is in reverse video, and only while it is fresh.
    @Test func theScreenFitsAndHighlightsAFreshBump() throws {
        let view = Self.view()
        let fresh = view.screen(width: 80, height: 24, now: Self.start + 4_000, highlight: 5_000, styled: true)
        #expect(fresh.count == 24)
        #expect(fresh.allSatisfy { $0.replacingOccurrences(of: "\u{1B}[7m", with: "").replacingOccurrences(of: "\u{1B}[0m", with: "").count <= 80 })
        let row = try #require(fresh.first { $0.contains("alice") })
        #expect(row.hasPrefix("\u{1B}[7m"))
        for part in ["alice 000000", "0.04m  ▎ ", "near", "+0.9", "uwb", "*#1 1s Alice"] { #expect(row.contains(part), "\(part) in \(row)") }
        #expect(fresh.last?.contains("shed ranges 7 inputs 2") == true)
        let later = view.screen(width: 80, height: 24, now: Self.start + 60_000, highlight: 5_000, styled: true)
        let quiet = try #require(later.first { $0.contains("alice") })
        #expect(!quiet.contains("\u{1B}["))
        #expect(quiet.contains("*#1 57s Alice"))
    }

    @Test func aSmallTerminalGetsWhatFitsAndSaysHowMuchIsLeft() {
        var lines = Self.lines
        for index in 0..<30 {
            let peer = String(format: "%016x", 0x100 + index)
            lines.append(#"{"v":1,"seq":99,"ts":"2026-01-01T00:00:05.000Z","type":"peer.found","node":"00000000000000aa","peer":"\#(peer)","name":"p\#(index)","rssi":-80}"#)
        }
        let screen = Self.view(lines).screen(width: 40, height: 10, now: Self.start + 5_000, highlight: 0, styled: false)
        #expect(screen.count == 10)
        #expect(screen.allSatisfy { $0.count <= 40 })
        #expect(screen[8].contains("more lines"))
    }

    @Test func plainLinesForTheEventsWorthALine() {
        let plain = Self.lines.compactMap(LiveView.plainLine)
        #expect(plain == [
            "00:00:00.000 rig 00000000000000aa uwb ready",
            "00:00:00.010 rig 00000000000000aa ble ready",
            "00:00:01.000 rig 00000000000000aa found peer 00000000000000b1 alice",
            "00:00:02.100 rig 00000000000000aa near peer 00000000000000b1 0.50 m",
            "00:00:03.000 rig 00000000000000aa BUMP #1 peer 00000000000000b1 0.04 m card Alice",
        ])
    }

    /// The web view applies typed events, `watch` their JSON lines: both must build the same view.
    @Test func typedEventsAndTheirLinesBuildTheSameView() {
        let events: [Event.Body] = [
            .device(.init(radio: .uwb, state: .ready, backend: "usb:1-1")),
            .peerFound(.init(peer: Self.alice, name: "alice", rssi: -61)),
            .range(.init(peer: Self.alice, status: "OK", distance: 0.31, filtered: 0.30, rate: 0.8, nlos: false, azimuth: 12, elevation: nil)),
            .near(.init(peer: Self.alice, distance: 0.30, azimuth: nil)),
            .bump(.init(peer: Self.alice, bumpID: 4, distance: 0.05, cardJSON: #"{"name":"Alice"}"#)),
            .rough(.init(peer: "00000000000000c3", rssi: -80, band: .far)),
            .peerLost(.init(peer: "00000000000000c3", reason: .timeout)),
        ]
        var typed = LiveView()
        var parsed = LiveView()
        for (index, body) in events.enumerated() {
            let event = Event(node: Self.rig, body: body)
            let at = Self.start + Int64(index) * 100
            typed.apply(event, timestampMilliseconds: at)
            parsed.apply(String(JSONLine.render(event, seq: UInt64(index + 1), timestampMilliseconds: at).dropLast()))
        }
        #expect(typed.rigs == parsed.rigs)
        #expect(typed.rigs[Self.rig]?.peers[Self.alice]?.azimuth == 12)
        #expect(typed.rigs[Self.rig]?.peers["00000000000000c3"]?.lost == "timeout")
    }

    @Test func timestampsAreReadAsUTCMilliseconds() {
        #expect(LiveView.milliseconds(iso8601: "2026-01-01T00:00:00.000Z") == Self.start)
        #expect(LiveView.milliseconds(iso8601: "1970-01-01T00:00:01.234Z") == 1_234)
        #expect(LiveView.milliseconds(iso8601: "2024-02-29T12:00:00.000Z") == 1_709_208_000_000)
        #expect(LiveView.milliseconds(iso8601: "yesterday") == nil)
    }
}
