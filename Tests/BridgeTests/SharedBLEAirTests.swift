import Foundation
import Testing

@testable import Simulation

/// BLE's shared air (docs/PROXIMITY.md, "Shared air"): advert collisions as pure ALOHA on the
/// scanner's channel, and a controller's connection limit in the world.
struct SharedBLEAirTests {
    /// The figures worked out by hand: a 47-octet legacy PDU at 1 µs per bit is 376 µs; with 100
    /// interferers advertising every 130 ms an event survives with e^(−2 × 0.376 × 100 / 130) =
    /// 0.5607, and one of the 250/130 = 1.923 events of a report period gets through with
    /// 1 − 0.4393^1.923 = 0.794.
    @Test func advertsSurviveAsPureALOHASays() {
        let air = SharedBLEAir()
        #expect(air.pduMicroseconds == Double(1 + 4 + 2 + 6 + 31 + 3) * 8)
        #expect(air.eventSurvives(interferers: 0) == 1)
        #expect(abs(air.eventSurvives(interferers: 100) - 0.5607) < 0.0005)
        #expect(air.heard(interferers: 100, periodMilliseconds: 250, draw: 0.793))
        #expect(!air.heard(interferers: 100, periodMilliseconds: 250, draw: 0.795))
        #expect(air.heard(interferers: 0, periodMilliseconds: 250, draw: 0.999_999))
    }

    /// Only adverts within the capture margin (21 dB) of the wanted one interfere, and the wanted
    /// one is not its own interferer.
    @Test func onlyAdvertsWithinTheMarginInterfere() {
        let air = SharedBLEAir()
        let levels: [Double] = [-95, -82, -80, -70, -60, -50]
        #expect(air.interferers(of: -60, amongAscending: levels) == 3)  // −80, −70, −50
        #expect(air.interferers(of: -50, amongAscending: levels) == 2)  // −70, −60
        #expect(air.interferers(of: -95, amongAscending: levels) == 5)
        #expect(air.interferers(of: -60, amongAscending: [-60]) == 0)
    }

    /// A controller holds `bleConnections` links at once: a rig limited to one ranges with one of
    /// the meetup's four others (it can neither open nor accept a second link), where without the
    /// limit it ranges with all four; the others range among themselves either way.
    @Test(arguments: [(1, 1), (nil, 4)] as [(Int?, Int)])
    func aControllerHoldsOnlySoManyConnections(limit: Int?, partners: Int) async throws {
        var scenario = try Scenario.builtIn("meetup")
        scenario.nodes[0].bleConnections = limit
        let events = try parse(try await runScenario(scenario, ranges: true, duration: 20))
        let (driver, _) = fastDriver(scenario, ranges: false)
        let ids = scenario.nodes.map { driver.identities[$0.name]!.peerID.description }
        func rangedWith(_ node: String) -> Set<String> {
            Set(events.filter { $0["type"] as? String == "range" && $0["node"] as? String == node }.compactMap { $0["peer"] as? String })
        }
        #expect(rangedWith(ids[0]).count == partners)
        #expect(rangedWith(ids[1]).isSuperset(of: ids[2...].filter { $0 != ids[1] }))
    }
}
