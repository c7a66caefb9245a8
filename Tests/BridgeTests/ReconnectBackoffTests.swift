import Events
import Foundation
import PeerProtocol
import Simulation
import StreamIO
import Synchronization
import Testing

@testable import Bridge

/// Reopening a board that went away (issue 16: a port that accepted and closed at once was
/// reopened 634 times a second, with a `device` line each time).
@Suite struct ReconnectBackoffTests {
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    @Test func aBoardThatWasUpAWhileIsReopenedAtOnceThenWaitsDoubleUpToTheCap() {
        var policy = ReconnectBackoff(seed: 1)
        #expect(policy.delayAfterLoss(upFor: .seconds(120)) == .zero)
        let waits = (0..<7).map { _ in Self.seconds(policy.delayAfterFailure()) }
        for (wait, base) in zip(waits, [1.0, 2, 4, 8, 10, 10, 10]) {
            #expect(wait >= base * 0.8 && wait <= base * 1.2, "\(waits)")
        }
    }

    @Test func aBoardThatKeepsGoingAwaySoonAfterComingBackWaitsLongerEachTime() {
        var policy = ReconnectBackoff(seed: 2)
        #expect(policy.delayAfterLoss(upFor: .seconds(3)) == .zero)
        let waits = (0..<6).map { _ in Self.seconds(policy.delayAfterLoss(upFor: .milliseconds(50))) }
        for (wait, base) in zip(waits, [1.0, 2, 4, 8, 10, 10]) {
            #expect(wait >= base * 0.8 && wait <= base * 1.2, "\(waits)")
        }
        #expect(policy.delayAfterLoss(upFor: ReconnectBackoff.stableAfter) == .zero, "a stable spell starts over")
    }

    @Test func jitterSpreadsRigsApart() {
        let waits = (0..<20).map { seed in
            var policy = ReconnectBackoff(seed: UInt64(seed))
            _ = policy.delayAfterLoss(upFor: .seconds(60))
            return policy.delayAfterFailure()
        }
        #expect(Set(waits).count > 15)
    }

    /// The rig's board goes away and its port then accepts and closes every connection at once.
    /// Time (the node's UWB clock) stands still at first: one attempt, no busy loop; then a
    /// minute passes and the attempts follow the back-off, not the speed of `connect`.
    @Test(.timeLimit(.minutes(3))) func aPortThatAcceptsAndClosesIsReopenedAtTheBackOffsPace() async throws {
        let driver = SimulationDriver(
            scenario: try Scenario.builtIn("world"), options: { var o = SimulationDriver.Options(); o.speed = 5; o.duration = 120; return o }(),
            events: EventStream(output: CollectedEvents(), includesRanges: false), logger: quietLogger)
        let server = try WorldServer(world: driver.world, host: "127.0.0.1", uwbBasePort: 0, airPort: 0, logger: quietLogger)
        defer { server.close() }
        let world = Task { try await driver.run() }
        defer { world.cancel() }
        let flapping = try TCPListener(host: "127.0.0.1", port: 0)
        defer { flapping.close() }
        let accepts = Atomic<Int>(0)
        flapping.acceptLoop { connection in
            accepts.add(1, ordering: .relaxed)
            connection.close()
        }
        let clock = ManualClock()
        let output = CollectedEvents()
        let node = BridgeNode(
            identity: NodeIdentity(
                peerID: PeerID(0xFFFF_0000_0000_0003), name: "flap-rig", group: 1, card: ProfileCard(name: "Flap"), uwbShortAddress: 0x4244),
            config: BridgeConfig(), uwbTransport: try StreamConnection.connect(host: "127.0.0.1", port: server.endpoints[0].uwbPort),
            ble: try RemoteAirAdapter(host: "127.0.0.1", port: server.airPort, body: "field-rig"),
            events: EventStream(output: output, includesRanges: false), time: SystemClock(), logger: quietLogger,
            seed: 3, reconnectUWB: { try StreamConnection.connect(host: "127.0.0.1", port: flapping.port) }, uwbClock: clock)
        try await node.start()
        let loop = Task { await node.run() }

        server.unplug(body: "field-rig")
        while accepts.load(ordering: .relaxed) < 1 {
            node.tick()
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(for: .milliseconds(500))
        #expect(accepts.load(ordering: .relaxed) == 1, "without time passing, no second attempt")

        for _ in 0..<60 {
            clock.advance(by: .seconds(1))
            try await Task.sleep(for: .milliseconds(50))
        }
        let attempts = accepts.load(ordering: .relaxed)
        // Waits of 1, 2, 4, 8 and then 10 s (±20 %) fit 6 to 9 attempts into a minute; fewer
        // when a loaded machine (a sanitizer, parallel suites) lets the clock run ahead of an
        // attempt, never more.
        #expect(attempts >= 2 && attempts <= 10, "\(attempts) attempts in a minute")
        await node.stop()
        await loop.value

        let removed = output.lines.filter { $0.contains(#""radio":"uwb""#) && $0.contains(#""state":"removed""#) }.count
        #expect(removed <= attempts + 1)
    }
}
