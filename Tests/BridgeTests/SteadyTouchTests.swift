import Events
import Foundation
import Testing

@testable import Simulation

/// Issue 29, "Every board bumps": a board that reports no received level in its range data and
/// reads a steady 3 cm while a peer touches it must bump, every touch.
///
/// Tests/Scenarios/steady-touch.json has an exact radio (no jitter, multipath, fading, faults and
/// no received-level bias), so the rig's board reports exactly 3 cm for the 2 s Alice holds her
/// device against it: whatever distance correction the bridge applies, it has a clean touch to
/// decide on. She comes every 18 s from 2 m away and stays beyond 1.5 m for over 14 s, so that
/// each touch is its own `near` (the far dwell is 5.5 s, and at `world --speed 2` `run` times it
/// on the host's clock: 11 s of world time), and so that a rig started just after `world` is
/// ranging before her first approach (at 6 s).
///
/// The rig runs in this process (the file marks it external for `world`), on the two kinds of
/// board without RSSI: a UCI 1.1 board (no RSSI octet) and a UCI 2.0 board whose firmware ignores
/// RSSI_REPORTING (the octet is 0). Alice's board reports no RSSI either (`"rssi": false`): with a
/// received level her side calls every touch from the saturated level alone and the rig merely
/// joins her profile drop, so the test would pass whatever the rig's no-RSSI path does (it did,
/// before she lost her RSSI).
///
/// scripts/test and Tests/USBEmulation/bridge-e2e.sh check the same through `run` over TCP and
/// over emulated USB, with scripts/check-every-touch-bumps.py.
@Suite(.serialized) struct SteadyTouchTests {
    /// How the rig's board leaves out the received level.
    enum BoardWithoutRSSI: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case uci11 = "UCI 1.1 (no RSSI octet)"
        case uci20IgnoringRSSIReporting = "UCI 2.0 ignoring RSSI_REPORTING (RSSI octet 0)"

        var testDescription: String { rawValue }

        func apply(to node: inout Scenario.Node) {
            switch self {
            case .uci11: node.uci = .v1_1
            case .uci20IgnoringRSSIReporting: node.rssi = false
            }
        }
    }

    /// Alice's path repeats every 18 s: she approaches from 2 m at 6-7.5 s, holds at 3 cm for
    /// 7.5-9.5 s, and is back at 2 m at 10.5 s.
    static let period = 18.0
    static let hold = 7.5...9.5
    /// Four touches; the run ends before a fifth approach starts (at 78 s).
    static let touches = 4

    @Test(arguments: BoardWithoutRSSI.allCases)
    func everySteadyTouchOfABoardWithoutRSSIBumps(board: BoardWithoutRSSI) async throws {
        var scenario = try Scenario.load(contentsOf: packageRoot.appendingPathComponent("Tests/Scenarios/steady-touch.json"))
        let rigIndex = try #require(scenario.nodes.firstIndex { $0.name == "field-rig" })
        scenario.nodes[rigIndex].external = false
        board.apply(to: &scenario.nodes[rigIndex])

        let (driver, output) = fastDriver(scenario, ranges: true, duration: Double(Self.touches) * Self.period)
        try await driver.run()
        let rig = try #require(driver.identities["field-rig"]).peerID.description
        let alice = try #require(driver.identities["alice"]).peerID.description
        let seen = try parse(output.lines).filter { $0["node"] as? String == rig && $0["peer"] as? String == alice }
        func ofType(_ type: String) -> [(index: Int, event: [String: Any])] {
            seen.enumerated().filter { $0.element["type"] as? String == type }.map { ($0.offset, $0.element) }
        }
        let nears = ofType("near")
        let bumps = ofType("bump")
        let ranges = ofType("range").map(\.event)

        // The touches really are the no-RSSI path: the board says 3 cm, and no received level.
        #expect(!ranges.isEmpty, "the rig never ranged with Alice")
        #expect(ranges.allSatisfy { $0["rssi"] is NSNull }, "the rig's board reported a received level; this test needs one that does not")
        for touch in 0..<Self.touches {
            let held = ranges.filter { range in
                let seconds = Self.seconds(range) - Double(touch) * Self.period
                return seconds > Self.hold.lowerBound + 0.05 && seconds < Self.hold.upperBound - 0.05
            }
            #expect(held.count >= 15, "touch \(touch + 1): only \(held.count) rounds while Alice held still")
            #expect(
                held.allSatisfy { $0["distance"] as? Double == 0.03 && $0["status"] as? String == "OK" },
                "touch \(touch + 1): the board did not read a steady 3 cm: \(Set(held.map { "\($0["distance"] ?? "nil")" }).sorted())")
        }

        // Every touch is followed by a bump with Alice before the next touch (or the run's end).
        let summary = "\(nears.count) touches (near) seen, \(bumps.count) bumps seen"
        #expect(nears.count == Self.touches, "expected \(Self.touches) touches: \(summary)")
        for (number, near) in nears.enumerated() {
            let next = number + 1 < nears.count ? nears[number + 1].index : seen.count
            let bumped = bumps.contains { $0.index > near.index && $0.index < next }
            let during = seen[near.index..<next].filter { $0["type"] as? String == "range" && $0["distance"] is Double }
            let lowest = during.compactMap { $0["distance"] as? Double }.min()
            // The filter overshoots on the approach; where it settles while the reading holds
            // still is the corrected reading that the contact test weighed.
            let settled = during.last { $0["distance"] as? Double == lowest }?["filtered"] as? Double
            let lowestText = lowest.map { "\($0)" } ?? "none"
            let settledText = settled.map { String(format: "%.3f", $0) } ?? "none"
            #expect(
                bumped,
                """
                touch \(number + 1) of \(nears.count) (near at \(near.event["ts"] ?? "?")) had no bump with Alice before \
                \(number + 1 < nears.count ? "the next touch" : "the run ended"): the board read down to \(lowestText) m \
                without RSSI, where the filtered distance settled at \(settledText) m; \(summary)
                """)
        }
        if let card = bumps.first?.event["card"] as? [String: Any] {
            #expect(card["name"] as? String == "Alice")
        }
    }

    /// Seconds of world time of an event (its timestamp on the driver's fixed epoch).
    static func seconds(_ event: [String: Any]) -> Double {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let text = event["ts"] as? String, let date = formatter.date(from: text) else { return -1 }
        return date.timeIntervalSince1970 - Double(fixedEpoch) / 1000
    }
}
