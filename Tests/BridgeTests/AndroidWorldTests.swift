import Bridge
import Events
import Foundation
import GATTServer
import Testing

@testable import Simulation

/// Emulated Android phones in the virtual world (issue 31 item 5): they run the ranging OOB
/// spec's sequence as initiator over the rig's OOB service, with choices of their own, and range
/// only if the rig's board got the FiRa parameters those choices imply, so these runs check the
/// rig's mapping against the phone's, not against itself.
@Suite(.serialized) struct AndroidWorldTests {
    /// The built-in `android` scenario (seed 1): rig alice bumps the rig; gina (spec v1) touches
    /// it at 14 s and stops at 32 s, hugo (v2) at 20 s and stops at 38 s, ines (v3) at 28 s and
    /// walks out of Bluetooth range, jon (Jetpack's parameters) at 36 s and stops at 43 s.
    private static let androidRun = Task { () throws -> (lines: [String], phones: [String: EmulatedAndroidPhone.Tally]) in
        let (driver, output) = fastDriver(try Scenario.builtIn("android"), ranges: false)
        try await driver.run()
        return (output.lines, tallies(driver))
    }

    private static func tallies(_ driver: SimulationDriver) -> [String: EmulatedAndroidPhone.Tally] {
        Dictionary(uniqueKeysWithValues: driver.androidPhones.map { (driver.world.scenario.nodes[$0.key].name, $0.value.tally) })
    }

    private static func phoneEvents(_ events: [[String: Any]], type: String) -> [[String: Any]] {
        events.filter { $0["type"] as? String == type && $0["kind"] as? String == "phone" }
    }

    @Test func everyVersionsPhoneIsFoundRangedBumpedAndLost() async throws {
        let (lines, tallies) = try await Self.androidRun.value
        let events = try parse(lines)
        let rig = try #require(peerIDs(of: Scenario.builtIn("android"))["rig"])

        let found = Self.phoneEvents(events, type: "peer.found")
        #expect(found.count == 4)
        #expect(found.allSatisfy { $0["node"] as? String == rig && $0["platform"] as? String == "android" })
        let phones = Set(found.compactMap { $0["peer"] as? String })
        #expect(phones.count == 4)

        let bumps = Self.phoneEvents(events, type: "bump")
        #expect(bumps.count == 4)
        #expect(Set(bumps.compactMap { $0["peer"] as? String }) == phones)
        #expect(bumps.allSatisfy { $0["decided_by"] as? String == "rig" && $0["platform"] as? String == "android" })
        for phone in phones {
            let near = events.firstIndex { $0["type"] as? String == "near" && $0["peer"] as? String == phone }
            let bump = events.firstIndex { $0["type"] as? String == "bump" && $0["peer"] as? String == phone }
            #expect(near != nil && bump != nil && near! < bump!, "near before the bump for \(phone)")
        }
        let lost = events.filter { $0["type"] as? String == "peer.lost" && phones.contains($0["peer"] as? String ?? "") }
        #expect(lost.count == 4 && lost.allSatisfy { $0["reason"] as? String == "peer-ended" })

        // Gina and hugo stopped (Stop Ranging answered); ines's link broke when she walked off.
        for name in ["gina-android-v1", "hugo-android-v2", "jon-jetpack"] {
            #expect(tallies[name]?.started == 1 && tallies[name]?.stopped == 1 && tallies[name]?.failures == 0, "\(name)")
        }
        #expect(tallies["ines-android-v3"]?.started == 1 && tallies["ines-android-v3"]?.stopped == 0)
        #expect(tallies["ines-android-v3"]?.failures == 1)
    }

    @Test func theRigsKeepBumpingEachOtherBesideThePhones() async throws {
        let events = try parse(try await Self.androidRun.value.lines)
        let ids = try peerIDs(of: Scenario.builtIn("android"))
        for (node, peer) in [("rig", "alice"), ("alice", "rig")] {
            let bumps = events.filter { $0["type"] as? String == "bump" && $0["node"] as? String == ids[node] && $0["peer"] as? String == ids[peer] }
            #expect(bumps.count == 1, "\(node) bumps \(peer)")
        }
    }

    @Test func androidEventsValidateAgainstTheSchema() async throws {
        let (status, message) = try validateAgainstSchema(try await Self.androidRun.value.lines)
        #expect(status == 0, "\(message)")
    }

    /// Over many seeds the phone's draws cover the rig as controller and as controlee, as
    /// initiator and as responder, static and provisioned STS (ids 1 and 3), and several intervals (an OOB phone's among the presets, a
    /// Jetpack phone's by its update rate); the phone bumps the rig in every one, so the rig's
    /// board took each combination as the phone meant it.
    @Test(arguments: [Scenario.Node.AndroidOOB.v3, .jetpack])
    func everyChoiceThePhoneDrawsRanges(_ oob: Scenario.Node.AndroidOOB) async throws {
        var rigControls: Set<Bool> = []
        var rigInitiates: Set<Bool> = []
        var intervals: Set<UInt16> = []
        var configIDs: Set<UInt8> = []
        for seed in UInt64(1)...8 {
            let (driver, output) = fastDriver(Self.onePhone(oob: oob), seed: seed, ranges: false)
            try await driver.run()
            let events = try parse(output.lines)
            let tally = try #require(Self.tallies(driver)["phone"])
            let choice = try #require(tally.configurations.first)
            #expect(tally.started == 1, "seed \(seed): \(choice)")
            // A 600 ms phone missed this 4 s touch before the contact test's approach window
            // spanned eight rounds (ContactDetector).
            #expect(Self.phoneEvents(events, type: "bump").count == 1, "seed \(seed): \(choice)")
            rigControls.insert(choice.rigControls)
            rigInitiates.insert(choice.rigInitiates)
            intervals.insert(choice.intervalMilliseconds)
            configIDs.insert(choice.configID)
        }
        #expect(rigControls == [true, false] && rigInitiates == [true, false])
        #expect(intervals.count >= 2)
        if oob == .jetpack { #expect(intervals == [120, 240, 600]) }
        // The virtual board runs provisioned STS: an OOB phone draws id 3 (16-octet key) too.
        #expect(configIDs == (oob == .jetpack ? [1] : [1, 3]))
    }

    /// A rig offering only Apple's services is never asked by an Android phone.
    @Test func aRigWithoutTheOOBServiceHearsNoAndroidPhone() async throws {
        let (driver, output) = fastDriver(Self.onePhone(services: [.qorvoNearbyInteraction]), ranges: false)
        try await driver.run()
        #expect(try parse(output.lines).allSatisfy { $0["kind"] == nil })
        #expect(Self.tallies(driver)["phone"]?.started == 0)
    }

    /// A rig and one Android phone (spec v3 unless `oob` says) that touches it from 5 to 9 s.
    private static func onePhone(services: [PhoneTransport] = [.androidOOB], oob: Scenario.Node.AndroidOOB = .v3) -> Scenario {
        var rig = Scenario.Node(name: "rig", path: [.init(t: 0, x: 0, y: 0)])
        rig.phoneServices = services
        var phone = Scenario.Node(
            name: "phone",
            path: [.init(t: 0, x: 3, y: 1), .init(t: 5, x: 0.03, y: 0), .init(t: 9, x: 0.03, y: 0), .init(t: 10, x: 1, y: 0.5)])
        phone.kind = .android
        phone.oob = oob
        return Scenario(name: "one-android", duration: 14, nodes: [rig, phone])
    }
}
