import BlueZMgmt
import Glibc
import Logging
import Testing

@testable import BLEBlueZ

/// A rig that stops leaves the adapter as it found it, however slowly the kernel answers: a rig
/// that stopped while its Start Discovery was unanswered never sent its Stop Discovery, the
/// kernel discovered for another 10 s, and bluetoothd's own discovery, asked for then, was
/// refused (CI, two-rigs `btd-first`, 2026-12-03).
@Suite(.timeLimit(.minutes(1))) struct AdapterStopTests {
    @Test func stoppingWhileStartDiscoveryIsUnansweredStillRemovesTheAdvertAndStopsDiscovery() async throws {
        let (socket, kernel) = try MgmtSocketTests.socket()
        defer { Glibc.close(kernel.fd) }
        // The kernel's answers come when this test gives them, however long a loaded machine
        // stalls it: the stop's deadline is not what is tested.
        let adapter = try BlueZAdapter(name: "hci0", psm: 0x80, logger: Logger(label: "test"), cleanUpGrace: .seconds(3600))
        adapter.adopt(socket) { _ in }
        let scanning = Task { try await adapter.startScanning() }
        // The start stops a discovery a predecessor may have left, then starts its own.
        let leftOver = try await kernel.nextCommand()
        #expect(leftOver.code == MgmtOpcode.stopDiscovery.rawValue)
        kernel.complete(.stopDiscovery, status: .rejected, [0x06])
        let start = try await kernel.nextCommand()
        #expect(start.code == MgmtOpcode.startDiscovery.rawValue && start.parameters == [0x06])

        // The kernel has not answered Start Discovery (its HCI work is slow) when the rig stops.
        let stopped = Task { await adapter.stop() }
        let removal = try await kernel.nextCommand()
        #expect(removal.code == MgmtOpcode.removeAdvertising.rawValue && removal.parameters == [1])
        let stop = try await kernel.nextCommand()
        #expect(stop.code == MgmtOpcode.stopDiscovery.rawValue && stop.parameters == [0x06])
        // As Linux answers: Stop Discovery refused at once (the start is still pending), then
        // the start done, then the removal (queued behind it).
        kernel.complete(.stopDiscovery, status: .rejected, [0x06])
        kernel.complete(.startDiscovery, [0x06])
        kernel.complete(.removeAdvertising, status: .invalidParameters, [1])
        // The discovery that started after the stop's Stop Discovery is stopped too.
        #expect(try await kernel.nextCommand().code == MgmtOpcode.removeAdvertising.rawValue)
        let stopAgain = try await kernel.nextCommand()
        #expect(stopAgain.code == MgmtOpcode.stopDiscovery.rawValue && stopAgain.parameters == [0x06])
        kernel.complete(.removeAdvertising, status: .invalidParameters, [1])
        kernel.complete(.stopDiscovery, [0x06])
        await stopped.value
        _ = await scanning.result
        #expect(kernel.peerClosed)
    }
}
