import Logging
import Synchronization
import StreamIO
import Testing
import UCI

@testable import UCIHost

@Suite(.timeLimit(.minutes(1))) struct CommandDeadlineTests {
    static func host(_ clock: CountingClock, attempts: Int = 1) async -> (UCIHost, ScriptedDevice) {
        let (hostEnd, deviceEnd) = MemoryTransport.pair()
        let host = UCIHost(transport: hostEnd, commandTimeout: .seconds(2), commandAttempts: attempts, clock: clock, logger: Logger(label: "test")) { _ in }
        await host.start()
        return (host, ScriptedDevice(transport: deviceEnd))
    }

    /// 100 commands answered at once: one sleep on the host's clock for all of them, not one per
    /// command (each was a Dispatch timer left armed for the whole timeout).
    @Test func aHundredAnsweredCommandsBeginOneSleep() async throws {
        let clock = CountingClock()
        let (host, scripted) = await Self.host(clock)
        var device = scripted
        for _ in 0..<100 {
            async let stop: Void = host.stopRanging(session: 1)
            _ = try await device.nextCommand()
            try await device.send([0x42, 0x01, 0x00, 0x01, 0x00])
            try await stop
        }
        #expect(clock.sleepsBegun <= 1)
    }

    /// Unanswered, a command waits exactly its timeout on the host's clock, each attempt, and
    /// the host's one sleeper moves on to the next attempt's deadline.
    @Test func anUnansweredCommandTimesOutOnTheHostsClock() async throws {
        let clock = CountingClock()
        let (host, scripted) = await Self.host(clock, attempts: 2)
        var device = scripted
        let reset = Task { try await host.reset() }
        _ = try await device.nextCommand()
        await clock.untilSleeping()
        clock.advance(by: .milliseconds(1_999))
        #expect(clock.sleeping == 1)  // not yet
        clock.advance(by: .milliseconds(1))
        _ = try await device.nextCommand()  // the second attempt
        await clock.untilSleeping()
        clock.advance(by: .seconds(2))
        await #expect(throws: UCIHostError.timeout(command: "CORE_DEVICE_RESET")) { try await reset.value }
        #expect(host.unansweredCommands == 1)
    }

    /// A UCI 1.x multicast-list response whose notification never comes: the update counts as
    /// done once the host's clock has passed one command timeout (it used to poll every 5 ms),
    /// and not before.
    @Test func aMissingMulticastNotificationIsWaitedForOneTimeout() async throws {
        let clock = CountingClock()
        let (host, scripted) = await Self.host(clock)
        var device = scripted
        let done = Atomic<Bool>(false)
        let update = Task {
            try await host.updateMulticastList(session: 42, .add, [Controlee(shortAddress: 0x0B0A, subSessionID: 0)])
            done.store(true, ordering: .releasing)
        }
        _ = try await device.nextCommand()
        try await device.send([0x41, 0x07, 0x00, 0x01, 0x00])
        while !done.load(ordering: .acquiring) {
            clock.advance(by: .milliseconds(100))
            try await Task.sleep(for: .milliseconds(1))
        }
        try await update.value
        #expect(clock.now.offset >= .seconds(2))
    }

    /// A packet whose rest never comes is given up after `packetAssemblyLimit` on the host's
    /// clock, well before the command's timeout, and the response behind it answers.
    @Test func aStalledPacketIsGivenUpOnTheHostsClock() async throws {
        let clock = CountingClock()
        let (host, scripted) = await Self.host(clock)
        var device = scripted
        async let start: Void = host.startRanging(session: 7)
        _ = try await device.nextCommand()
        await clock.untilSleeping()
        // A notification header claiming 200 bytes, then the response.
        try await device.send([0x60, 0x01, 0x00, 0xC8, 0x42, 0x00, 0x00, 0x01, 0x00])
        await clock.untilSleeping(2)  // the stall's deadline is earlier: a second sleeper
        clock.advance(by: UCIHost.packetAssemblyLimit)
        try await start
        #expect(clock.sleepsBegun == 2)
    }

    /// A reset unanswered until its deadline passed on the host's clock: the host has sent it
    /// again, byte for byte.
    static func resetSentTwice() async throws -> (UCIHost, ScriptedDevice, Task<Void, any Error>) {
        let clock = CountingClock()
        let (host, scripted) = await Self.host(clock, attempts: 3)
        var device = scripted
        let reset = Task { try await host.reset() }
        #expect(try await device.nextCommand() == UCIHostTests.deviceReset)
        await clock.untilSleeping()
        clock.advance(by: .seconds(2))
        #expect(try await device.nextCommand() == UCIHostTests.deviceReset)
        return (host, device, reset)
    }

    /// A command whose answer was lost goes out again, and the answer to the second copy
    /// completes it (issue 16: a CORE_DEVICE_RESET answer lost after a reconnect left the board
    /// unused for 40 s and more).
    @Test func aCommandWhoseAnswerWasLostIsSentAgain() async throws {
        let (host, device, reset) = try await Self.resetSentTwice()
        try await device.send(UCIHostTests.deviceResetOK)
        try await reset.value
        #expect(host.unansweredCommands == 0)
    }

    /// The answer comes late (issue 16: 3 s, past the 2 s timeout): the command has gone out
    /// again, the late answer completes it, and the second copy's answer, coming after, answers
    /// nothing: the next command still gets its own.
    @Test func aLateAnswerCompletesTheCommandAndItsTwinAnswersNothing() async throws {
        let (host, scripted, reset) = try await Self.resetSentTwice()
        var device = scripted
        try await device.send(UCIHostTests.deviceResetOK)  // the first one's answer, late
        try await reset.value
        try await UCIHostTests.startSession7(on: host, &device, answeringAfter: UCIHostTests.deviceResetOK)  // the second one's
    }
}
