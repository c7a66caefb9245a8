import BlueZMgmt
import Glibc
import Logging
import Testing

@testable import BLEBlueZ

/// The kernel answers Add Advertising with Busy while another client (bluetoothd) sets up its
/// own advertising or discovery; a rig's start once failed on it (CI, two-rigs `btd-first`).
@Suite(.timeLimit(.minutes(1))) struct AdvertisingBusyTests {
    @Test func anAdvertAnsweredBusyIsNotAnErrorAndTheRefreshAddsItAgain() async throws {
        let (socket, kernel) = try MgmtSocketTests.socket()
        defer { Glibc.close(kernel.fd) }
        // The stop at the end waits for this test's answers however long a loaded machine stalls it.
        let adapter = try BlueZAdapter(name: "hci0", psm: 0x80, logger: Logger(label: "test"), cleanUpGrace: .seconds(3600))
        adapter.adopt(socket) { _ in }
        // Flags, then manufacturer data: the adapter drops the Flags (the kernel writes its own).
        let advertised = Task { try await adapter.advertise([0x02, 0x01, 0x06, 0x04, 0xFF, 0xFF, 0xFF, 0x01], scanResponse: []) }

        let first = try await kernel.nextCommand()
        #expect(first.code == MgmtOpcode.addAdvertising.rawValue)
        kernel.complete(.addAdvertising, status: .busy)
        try await advertised.value  // threw BlueZError.command(.addAdvertising, .busy) before

        // The refresh (every 3 s) adds the same instance with the same data again.
        let again = try await kernel.nextCommand()
        #expect(again.code == MgmtOpcode.addAdvertising.rawValue)
        #expect(again.parameters == first.parameters)
        // mgmt-api.txt: Instance, Flags (4), Duration (2), Timeout (2), Adv_Data_Len, Scan_Rsp_Len,
        // Adv_Data: a timeout of 8 s, and our data without its Flags.
        #expect(Array(again.parameters[7..<9]) == [0x08, 0x00])
        #expect(Array(again.parameters.suffix(7)) == [0x05, 0x00, 0x04, 0xFF, 0xFF, 0xFF, 0x01])
        kernel.complete(.addAdvertising, [again.parameters[0]])

        let stopped = Task { await adapter.stop() }
        let removal = try await kernel.nextCommand()
        #expect(removal.code == MgmtOpcode.removeAdvertising.rawValue)
        kernel.complete(.removeAdvertising, [removal.parameters[0]])
        let stopDiscovery = try await kernel.nextCommand()
        kernel.complete(MgmtOpcode(rawValue: stopDiscovery.code)!, [0x06])
        await stopped.value
    }
}
