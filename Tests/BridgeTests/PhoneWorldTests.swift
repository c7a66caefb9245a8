import Bridge
import Events
import Foundation
import GATTServer
import Testing

@testable import Simulation

/// Emulated iPhones in the virtual world (issue 33 item 4): they follow Apple's accessory message
/// flow over the rig's GATT service and range only if the rig's board got the FiRa parameters
/// their own blob implies, so these runs check the rig's mapping against the phone's, not against
/// itself.
@Suite(.serialized) struct PhoneWorldTests {
    /// The built-in `phones` scenario (seed 1): the rig serves both services, rig alice bumps it,
    /// iPhone erin touches it at 14 s and stops its app at 32 s, iPhone frank touches it at 22 s
    /// and walks out of Bluetooth range.
    private static let phonesRun = Task { () throws -> (lines: [String], phones: [String: EmulatedIPhone.Tally]) in
        let scenario = try Scenario.builtIn("phones")
        let (driver, output) = fastDriver(scenario, ranges: false)
        try await driver.run()
        return (output.lines, tallies(driver))
    }

    private static func tallies(_ driver: SimulationDriver) -> [String: EmulatedIPhone.Tally] {
        Dictionary(uniqueKeysWithValues: driver.phones.map { (driver.world.scenario.nodes[$0.key].name, $0.value.tally) })
    }

    private static func phoneEvents(_ events: [[String: Any]], type: String) -> [[String: Any]] {
        events.filter { $0["type"] as? String == type && $0["kind"] as? String == "phone" }
    }

    @Test func bothPhonesAreFoundRangedBumpedAndLost() async throws {
        let (lines, tallies) = try await Self.phonesRun.value
        let events = try parse(lines)
        let rig = try #require(peerIDs(of: Scenario.builtIn("phones"))["rig"])

        let found = Self.phoneEvents(events, type: "peer.found")
        #expect(found.count == 2)
        #expect(found.allSatisfy { $0["node"] as? String == rig && $0["platform"] as? String == "ios" })
        let phones = Set(found.compactMap { $0["peer"] as? String })
        #expect(phones.count == 2)

        // One bump per touch, decided by the rig alone, no card either way.
        let bumps = Self.phoneEvents(events, type: "bump")
        #expect(bumps.count == 2)
        #expect(Set(bumps.compactMap { $0["peer"] as? String }) == phones)
        #expect(bumps.allSatisfy { $0["decided_by"] as? String == "rig" && ($0["card"] as? [String: Any])?.isEmpty == true })
        for phone in phones {
            let near = events.firstIndex { $0["type"] as? String == "near" && $0["peer"] as? String == phone }
            let bump = events.firstIndex { $0["type"] as? String == "bump" && $0["peer"] as? String == phone }
            #expect(near != nil && bump != nil && near! < bump!, "near before the bump for \(phone)")
        }
        // Erin's app stopped (0x0C answered by 0x03); frank's link broke: both ended on the rig.
        let lost = events.filter { $0["type"] as? String == "peer.lost" && phones.contains($0["peer"] as? String ?? "") }
        #expect(lost.count == 2)
        #expect(lost.allSatisfy { $0["reason"] as? String == "peer-ended" })
        #expect(tallies["erin-iphone"] == EmulatedIPhone.Tally(started: 1, stopped: 1, failures: 0))
        #expect(tallies["frank-iphone"] == EmulatedIPhone.Tally(started: 1, stopped: 0, failures: 1))
    }

    @Test func theRigsKeepBumpingEachOtherBesideThePhones() async throws {
        let events = try parse(try await Self.phonesRun.value.lines)
        let ids = try peerIDs(of: Scenario.builtIn("phones"))
        for (node, peer) in [("rig", "alice"), ("alice", "rig")] {
            let bumps = events.filter { $0["type"] as? String == "bump" && $0["node"] as? String == ids[node] && $0["peer"] as? String == ids[peer] }
            #expect(bumps.count == 1, "\(node) bumps \(peer)")
            #expect(bumps.first?["kind"] == nil)
        }
    }

    @Test func phoneEventsValidateAgainstTheSchema() async throws {
        let lines = try await Self.phonesRun.value.lines
        let (status, message) = try validateAgainstSchema(lines)
        #expect(status == 0, "\(message)")
    }

    /// The same world with the rig writing the addresses and vendor id in the other octet order
    /// (`AccessoryOctetOrder.reversed`): the exchange completes, but the air hears two sessions
    /// that do not match, so nothing is ranged with the phones, while the rigs still bump.
    @Test func aBoardGivenOtherOctetsDoesNotRangeWithThePhone() async throws {
        let scenario = try Scenario.builtIn("phones")
        let (driver, output) = fastDriverWithBridge(scenario) { $0.phoneOctetOrder = .reversed }
        try await driver.run()
        let events = try parse(output.lines)
        let phones = Set(Self.phoneEvents(events, type: "peer.found").compactMap { $0["peer"] as? String })
        #expect(phones.count == 2)
        #expect(Self.tallies(driver)["erin-iphone"]?.started == 1)
        let ranged = events.filter { ["near", "bump", "nearest"].contains($0["type"] as? String) && phones.contains($0["peer"] as? String ?? "") }
        #expect(ranged.isEmpty)
        #expect(events.count { $0["type"] as? String == "bump" } == 2)
    }

    /// A rig offering only the Nordic UART service: the phone's app uses that one.
    @Test func aRigOfferingOnlyNordicUARTServesThePhoneOverIt() async throws {
        let lines = try await runScenario(Self.onePhone(services: [.nordicUART]), ranges: false)
        let events = try parse(lines)
        #expect(Self.phoneEvents(events, type: "peer.found").count == 1)
        #expect(Self.phoneEvents(events, type: "bump").count == 1)
    }

    /// A rig that serves no phones is never connected to.
    @Test func aRigServingNoPhonesHearsNoPhone() async throws {
        let (driver, output) = fastDriver(Self.onePhone(services: nil), ranges: false)
        try await driver.run()
        #expect(try parse(output.lines).allSatisfy { $0["kind"] == nil })
        #expect(Self.tallies(driver)["phone"]?.started == 0)
    }

    /// A rig and one iPhone that touches it from 5 to 7 s.
    private static func onePhone(services: [PhoneTransport]?) -> Scenario {
        var rig = Scenario.Node(name: "rig", path: [.init(t: 0, x: 0, y: 0)])
        rig.phoneServices = services
        var phone = Scenario.Node(
            name: "phone",
            path: [.init(t: 0, x: 3, y: 1), .init(t: 5, x: 0.03, y: 0), .init(t: 7, x: 0.03, y: 0), .init(t: 8, x: 1, y: 0.5)])
        phone.kind = .iphone
        return Scenario(name: "one-phone", duration: 12, nodes: [rig, phone])
    }
}

/// `fastDriver` with the nodes' bridge configuration changed by `change`.
private func fastDriverWithBridge(_ scenario: Scenario, change: (inout BridgeConfig) -> Void) -> (driver: SimulationDriver, output: CollectedEvents) {
    let output = CollectedEvents()
    var options = SimulationDriver.Options()
    options.speed = nil
    options.epochMilliseconds = fixedEpoch
    change(&options.bridge)
    let driver = SimulationDriver(scenario: scenario, options: options, events: EventStream(output: output, includesRanges: false), logger: quietLogger)
    return (driver, output)
}
