import Foundation
import Testing

@testable import Simulation

/// Issue 33's crowd acceptance: ten iPhones and ten rigs in one world. Every rig's board runs two
/// sessions (budget 2), so a phone's session leaves one for the other nine rigs it hears: the
/// phones hold their share (at most half, `NodeCore+Phones`) and the rigs keep the rest, and
/// every rig–rig bump still happens while every phone bumps its own rig.
@Suite struct PhoneHallTests {
    /// Rigs in five pairs 3 m apart, pairs 4 m apart: rig 2k+1 walks to rig 2k and touches it at
    /// 10 + 6k s, then goes home. Phone i starts 1.5 m from rig i (so that rig is the nearest
    /// one when its app connects) and touches it while that rig is at home.
    static func hall() -> Scenario {
        var nodes: [Scenario.Node] = []
        func home(_ i: Int) -> (x: Double, y: Double) { (Double(i / 2) * 4, i % 2 == 0 ? 0 : 3) }
        for i in 0..<10 {
            let (x, y) = home(i)
            var path: [Scenario.Waypoint] = [.init(t: 0, x: x, y: y)]
            if i % 2 == 1 {
                let t = 10 + 6 * Double(i / 2)
                path += [
                    .init(t: t - 4, x: x + 0.5, y: 0.8), .init(t: t - 1, x: x + 0.03, y: 0.02), .init(t: t + 1, x: x + 0.03, y: 0.02),
                    .init(t: t + 2, x: x + 0.6, y: 1), .init(t: t + 8, x: x, y: y),
                ]
            }
            var rig = Scenario.Node(name: "rig\(i)", path: path, uwbSessions: 2)
            rig.phoneServices = [.qorvoNearbyInteraction]
            nodes.append(rig)
        }
        for i in 0..<10 {
            let (x, y) = home(i)
            let start = (x: x - 0.5, y: i % 2 == 0 ? y - 1.5 : y + 1.5)
            let t = i % 2 == 0 ? 12 + 3 * Double(i) : 44 + 2 * Double(i / 2)
            var phone = Scenario.Node(
                name: "phone\(i)",
                path: [
                    .init(t: 0, x: start.x, y: start.y), .init(t: t - 4, x: x - 0.8, y: y - 0.6), .init(t: t, x: x - 0.03, y: y - 0.02),
                    .init(t: t + 2, x: x - 0.03, y: y - 0.02), .init(t: t + 3, x: x - 0.7, y: y - 0.7), .init(t: t + 10, x: start.x, y: start.y),
                ])
            phone.kind = .iphone
            nodes.append(phone)
        }
        var radio = RadioModel()
        (radio.sigma, radio.nlosProbability, radio.dropoutProbability) = (0.10, 0.05, 0.05)
        return Scenario(name: "hall", duration: 62, group: 1, radio: radio, nodes: nodes)
    }

    @Test func everyRigPairAndEveryPhoneBumpsWithTwoSessionsPerBoard() async throws {
        let scenario = Self.hall()
        let (driver, output) = fastDriver(scenario, ranges: false)
        try await driver.run()
        let events = try parse(output.lines)
        let ids = driver.identities.mapValues(\.peerID.description)

        let stats = events.filter { $0["type"] as? String == "stats" }
        #expect(!stats.isEmpty && stats.allSatisfy { $0["budget"] as? Int == 2 })

        let bumps = events.filter { $0["type"] as? String == "bump" }
        for k in 0..<5 {
            let (a, b) = (ids["rig\(2 * k)"], ids["rig\(2 * k + 1)"])
            #expect(bumps.count { $0["node"] as? String == a && $0["peer"] as? String == b } == 1, "rig\(2 * k) bumps rig\(2 * k + 1)")
            #expect(bumps.count { $0["node"] as? String == b && $0["peer"] as? String == a } == 1, "rig\(2 * k + 1) bumps rig\(2 * k)")
        }
        #expect(bumps.count { $0["kind"] == nil } == 10)
        // Each phone bumps its own rig once, and nobody else.
        let phoneBumps = bumps.filter { $0["kind"] as? String == "phone" }
        #expect(phoneBumps.count == 10)
        for i in 0..<10 {
            #expect(phoneBumps.count { $0["node"] as? String == ids["rig\(i)"] } == 1, "phone\(i) bumps rig\(i)")
        }
        #expect(driver.phones.values.allSatisfy { $0.tally.started == 1 })
    }
}
