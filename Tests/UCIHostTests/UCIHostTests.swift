import Logging
import Synchronization
import StreamIO
import Testing
import UCI

@testable import UCIHost

@Suite struct UCIHostTests {
    /// Response bytes as pica sends them (google/pica src/device.rs: UCI 2.0, MAC/PHY 1.3).
    @Test func deviceInfoFromPicaBytes() async throws {
        let (host, scripted, _) = await makeHost()
        var device = scripted
        async let info = host.deviceInfo()
        #expect(try await device.nextCommand() == [0x20, 0x02, 0x00, 0x00])
        try await device.send([0x40, 0x02, 0x00, 0x0A, 0x00, 0x02, 0x00, 0x01, 0x30, 0x01, 0x30, 0x01, 0x10, 0x00])
        let result = try await info
        #expect(result.uciVersion.description == "2.0.0")
        #expect(result.macVersion.description == "1.3.0")
    }

    @Test func oneCommandAtATime() async throws {
        let (host, scripted, _) = await makeHost()
        var device = scripted
        async let first = host.send(.sessionStart(session: 1))
        async let second = host.send(.sessionStop(session: 1))
        let a = try await device.nextCommand()
        // The other command must not be on the wire before the first is answered.
        try await Task.sleep(for: .milliseconds(50))
        #expect(try device.decoder.next() == nil)
        try await device.send(UCIMessage(messageType: .response, groupID: a[0] & 0x0F, opcodeID: a[1], payload: [0]).encoded())
        let b = try await device.nextCommand()
        #expect(Set([a[1], b[1]]) == [0x00, 0x01])
        try await device.send(UCIMessage(messageType: .response, groupID: b[0] & 0x0F, opcodeID: b[1], payload: [0]).encoded())
        #expect(try await first.status == .ok)
        #expect(try await second.status == .ok)
    }

    /// Sent three times, never answered: the command fails with a timeout, is counted, and the
    /// next command works.
    @Test func timeoutFailsTheCommandAndTheNextOneWorks() async throws {
        let (host, scripted, _) = await makeHost(timeout: .milliseconds(50))
        var device = scripted
        await #expect(throws: UCIHostError.timeout(command: "CORE_DEVICE_RESET")) { try await host.reset() }
        for _ in 1...3 { #expect(try await device.nextCommand() == Self.deviceReset) }
        #expect(host.unansweredCommands == 1)
        try await Self.startSession7(on: host, &device)
    }

    /// CORE_DEVICE_RESET_CMD (GID 0, OID 0, reset config 0) and its OK response, as FiRa UCI lays them out.
    static let deviceReset: [UInt8] = [0x20, 0x00, 0x00, 0x01, 0x00]
    static let deviceResetOK: [UInt8] = [0x40, 0x00, 0x00, 0x01, 0x00]

    /// CORE_GENERIC_ERROR_NTF with STATUS_COMMAND_RETRY (0x0A): the UWBS received the command
    /// damaged and asks for it again; the host resends it at once, without waiting out the timeout.
    @Test func aRetryRequestSendsTheCommandAgain() async throws {
        let (host, scripted, _) = await makeHost(timeout: .seconds(60))
        var device = scripted
        async let start: Void = host.startRanging(session: 7)
        let first = try await device.nextCommand()
        try await device.send([0x60, 0x07, 0x00, 0x01, 0x0A])
        #expect(try await device.nextCommand() == first)
        try await device.send([0x42, 0x00, 0x00, 0x01, 0x00])
        try await start
    }

    /// A UWBS that asks for the command again every time: after the attempts, a clear error.
    @Test func endlessRetryRequestsFailTheCommand() async throws {
        let (host, scripted, _) = await makeHost(timeout: .seconds(60), attempts: 2)
        var device = scripted
        let start = Task { try await host.startRanging(session: 7) }
        for _ in 1...2 {
            _ = try await device.nextCommand()
            try await device.send([0x60, 0x07, 0x00, 0x01, 0x0A])
        }
        await #expect(throws: UCIHostError.retryRequested(command: "SESSION_START")) { try await start.value }
    }

    /// SESSION_START for session 7, which the device answers OK after first sending `before`.
    static func startSession7(on host: UCIHost, _ device: inout ScriptedDevice, answeringAfter before: [UInt8] = []) async throws {
        async let start = host.startRanging(session: 7)
        #expect(try await device.nextCommand() == [0x22, 0x00, 0x00, 0x04, 0x07, 0x00, 0x00, 0x00])
        if !before.isEmpty { try await device.send(before) }
        try await device.send([0x42, 0x00, 0x00, 0x01, 0x00])
        try await start
    }

    /// A response the device sent twice (or too late) answers no later command: a duplicated
    /// SESSION_SET_APP_CONFIG_RSP arriving while SESSION_START waits is dropped, and SESSION_START
    /// takes its own response (issue: one duplicate used to fail the start and every session
    /// after it).
    @Test func aStrayResponseDoesNotAnswerTheCommandWaiting() async throws {
        let (host, scripted, _) = await makeHost()
        var device = scripted
        // SESSION_SET_APP_CONFIG_RSP (GID 1, OID 3): status OK, no failed parameters.
        try await Self.startSession7(on: host, &device, answeringAfter: [0x41, 0x03, 0x00, 0x02, 0x00, 0x00])
    }

    /// A header whose length was corrupted (a notification claiming 200 bytes) must not swallow
    /// the response behind it until 200 more bytes trickle in (issue 16: ~36 s on a quiet link):
    /// after `packetAssemblyLimit` (250 ms) the host drops it and finds the response. Without that
    /// the command would fail after three 60 s attempts: the device answers only once.
    @Test func aCorruptedLengthDoesNotHoldUpTheResponsesBehindIt() async throws {
        let (host, scripted, _) = await makeHost(timeout: .seconds(60))
        var device = scripted
        try await Self.startSession7(on: host, &device, answeringAfter: [0x60, 0x01, 0x00, 0xC8])
    }

    @Test func aStreamDecoderGivesUpAStalledPacketAndFindsTheNextOne() throws {
        var decoder = UCIStreamDecoder()
        decoder.append([0x60, 0x01, 0x00, 0xC8, 0x42, 0x00, 0x00, 0x01, 0x00])
        #expect(try decoder.next() == nil)
        #expect(decoder.pendingByteCount == 9)
        decoder.skipStalledPacket()
        var found: UCIMessage?
        while found == nil {
            do { found = try decoder.next() } catch UCIError.garbage { continue }
        }
        #expect(found?.messageType == .response)
        #expect(found?.groupID == 2)
        #expect(decoder.streamOffset == 9)
        #expect(decoder.discardedByteCount == 4)
    }

    @Test func notificationsArriveInOrderAndSessionStateIsTracked() async throws {
        let (host, scripted, recorder) = await makeHost()
        var device = scripted
        async let token = host.initSession(id: 42)
        #expect(try await device.nextCommand() == [0x21, 0x00, 0x00, 0x05, 0x2A, 0x00, 0x00, 0x00, 0x00])
        // UCI 2.0 response with handle 0x0100 0000, then SESSION_STATUS_NTF INIT and IDLE.
        try await device.send(
            [0x41, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x01]
                + [0x61, 0x02, 0x00, 0x06, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00]
                + [0x61, 0x02, 0x00, 0x06, 0x00, 0x00, 0x00, 0x01, 0x03, 0x00])
        #expect(try await token == 0x0100_0000)
        await recorder.waitFor(count: 2)
        #expect(
            recorder.all == [
                .notification(.sessionStatus(session: 0x0100_0000, state: .initialized, reason: .stateChangeWithSessionManagementCommands)),
                .notification(.sessionStatus(session: 0x0100_0000, state: .idle, reason: .stateChangeWithSessionManagementCommands)),
            ])
        #expect(host.sessionStates == [0x0100_0000: .idle])
    }

    @Test func uci1xSessionIDIsTheToken() async throws {
        let (host, scripted, _) = await makeHost()
        var device = scripted
        async let token = host.initSession(id: 42)
        _ = try await device.nextCommand()
        try await device.send([0x41, 0x00, 0x00, 0x01, 0x00])
        #expect(try await token == 42)
    }

    /// UCI 1.1: SESSION_UPDATE_CONTROLLER_MULTICAST_LIST_RSP is a status alone; the outcome per
    /// controlee is in the notification (session id, remaining list size, count, then address,
    /// sub-session id, status). A refusal there fails the update; an accepted one completes it.
    @Test func uci1xMulticastOutcomeComesFromTheNotification() async throws {
        let (host, scripted, _) = await makeHost()
        var device = scripted
        let controlee = Controlee(shortAddress: 0x0B0A, subSessionID: 0)
        let refused = Task { try await host.updateMulticastList(session: 42, .add, [controlee]) }
        #expect(try await device.nextCommand() == [0x21, 0x07, 0x00, 0x0C, 0x2A, 0x00, 0x00, 0x00, 0x00, 0x01, 0x0A, 0x0B, 0x00, 0x00, 0x00, 0x00])
        try await device.send([0x41, 0x07, 0x00, 0x01, 0x00])
        // 61 07: session 42, 0 places left, 1 controlee: 0x0B0A, sub-session 0, MULTICAST_LIST_FULL.
        try await device.send([0x61, 0x07, 0x00, 0x0D, 0x2A, 0x00, 0x00, 0x00, 0x00, 0x01, 0x0A, 0x0B, 0x00, 0x00, 0x00, 0x00, 0x01])
        await #expect(throws: UCIHostError.multicastListRefused(address: 0x0B0A, status: MulticastUpdateStatus.listFull)) {
            try await refused.value
        }
        let accepted = Task { try await host.updateMulticastList(session: 42, .add, [controlee]) }
        _ = try await device.nextCommand()
        try await device.send([0x41, 0x07, 0x00, 0x01, 0x00])
        try await device.send([0x61, 0x07, 0x00, 0x0D, 0x2A, 0x00, 0x00, 0x00, 0x07, 0x01, 0x0A, 0x0B, 0x00, 0x00, 0x00, 0x00, 0x00])
        try await accepted.value
    }

    @Test func garbageOnTheWireIsSkipped() async throws {
        let (host, scripted, _) = await makeHost()
        var device = scripted
        async let stop = host.stopRanging(session: 1)
        _ = try await device.nextCommand()
        try await device.send([0x00, 0xFF, 0x13, 0x99, 0x8F] + [0x42, 0x01, 0x00, 0x01, 0x00])
        try await stop
    }

    @Test func rejectedParametersAreNamed() async throws {
        let (host, scripted, _) = await makeHost()
        var device = scripted
        let set = Task { try await host.setAppConfig(session: 1, [.channel(7)]) }
        _ = try await device.nextCommand()
        // SET_APP_CONFIG_RSP: INVALID_PARAM, 1 entry: CHANNEL_NUMBER (0x04) -> INVALID_RANGE (0x05).
        try await device.send([0x41, 0x03, 0x00, 0x04, 0x04, 0x01, 0x04, 0x05])
        await #expect(throws: UCIHostError.configRejected([AppConfigStatus(id: .channelNumber, status: .invalidRange)])) {
            try await set.value
        }
    }

    @Test func deviceGoneFailsThePendingCommandAndIsReported() async throws {
        let (host, scripted, recorder) = await makeHost()
        var device = scripted
        let reset = Task { try await host.reset() }
        _ = try await device.nextCommand()
        device.transport.close()
        await #expect(throws: UCIHostError.closed) { try await reset.value }
        await recorder.waitFor(count: 1)
        #expect(recorder.all == [.closed(.closed)])
        await #expect(throws: UCIHostError.closed) { try await host.reset() }
    }
}
