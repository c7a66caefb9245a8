import Foundation
import Testing
import UCI

@testable import Simulation

/// The shared UWB air (docs/PROXIMITY.md, "Shared air"): frame durations from IEEE 802.15.4z's
/// numbers, the round's layout in slots, when a frame survives what overlaps it, and what the
/// world does with it.
struct SharedUWBAirTests {
    // MARK: Frame durations

    /// Expected values worked out by hand from the standard's constants: chips at 499.2 MHz, a
    /// BPRF preamble symbol of 127 × 4 chips (1017.63 ns), 19 PHR bits at 1025.64 ns, PSDU bits at
    /// 128.21 ns with 48 parity bits per 330.
    @Test func fiRaDefaultsGiveTheStandardsDurations() {
        let timing = UWBFrameTiming(config: [:])
        #expect(abs(timing.shrMicroseconds - 73.269) < 0.01)  // 64 + 8 symbols
        #expect(abs(timing.stsMicroseconds - 66.667) < 0.01)  // 64 × 512 chips + a 512-chip gap
        #expect(abs(timing.rangingFrameMicroseconds - 139.936) < 0.01)  // SP3: SHR and STS only
        #expect(abs(timing.controlFrameMicroseconds - 139.938) < 0.01)  // SP0, 40 octets: 320 + 48 bits
        #expect(abs(timing.reportFrameMicroseconds - 154.297) < 0.01)  // SP0, 48 octets: 384 + 96 bits
        #expect(timing.slotMicroseconds == 2000)  // 2400 RSTU
    }

    @Test func theSessionsConfigChangesThem() {
        let timing = UWBFrameTiming(config: [
            .preambleDuration: [0], .sfdID: [1], .stsLength: [0], .slotDuration: [0x60, 0x09], .rframeConfig: [3],
        ])
        #expect(abs(timing.rangingFrameMicroseconds - 70.481) < 0.01)  // 32 + 4 symbols, 32 × 512 chips + gap
        #expect(timing.slotMicroseconds == 2000)
        #expect(UWBFrameTiming(config: [.slotDuration: [0xC0, 0x12]]).slotMicroseconds == 4000)
        #expect(UWBFrameTiming(config: [.rframeConfig: [0]]).rangingFrameMicroseconds < 100)  // SP0: no STS
    }

    // MARK: Round layout

    @Test func aUnicastRoundTakesFiveSlotsOfFrames() {
        let frames = SharedUWBAir.roundFrames(
            round: 7, start: 1000, timing: UWBFrameTiming(config: [:]), channel: 9, preambleCode: 10, controller: 1,
            controllerInitiates: true, controlees: [2])
        #expect(frames.map(\.kind) == [.control, .poll, .response, .final, .report])
        #expect(frames.map(\.start) == [1000, 3000, 5000, 7000, 9000])
        #expect(frames.map(\.transmitter) == [1, 1, 2, 1, 1])
        #expect(frames.map(\.receiver) == [2, 2, 1, 2, 2])
        let responding = SharedUWBAir.roundFrames(
            round: 7, start: 0, timing: UWBFrameTiming(config: [:]), channel: 9, preambleCode: 10, controller: 1,
            controllerInitiates: false, controlees: [2])
        #expect(responding.map(\.transmitter) == [1, 2, 1, 2, 2])
    }

    @Test func aControllerWithoutPartnerStillTransmits() {
        let frames = SharedUWBAir.roundFrames(
            round: 0, start: 0, timing: UWBFrameTiming(config: [:]), channel: 9, preambleCode: 10, controller: 1,
            controllerInitiates: true, controlees: [])
        #expect(frames.map(\.kind) == [.control, .poll])
        #expect(frames.allSatisfy { $0.receiver == nil })
    }

    @Test func oneToManyGivesEachControleeItsResponseSlot() {
        let frames = SharedUWBAir.roundFrames(
            round: 0, start: 0, timing: UWBFrameTiming(config: [:]), channel: 9, preambleCode: 10, controller: 0,
            controllerInitiates: true, controlees: [4, 5, 6])
        #expect(frames.filter { $0.kind == .response }.map(\.slot) == [2, 3, 4])
        #expect(Set(frames.filter { $0.kind == .final }.map(\.slot)) == [5])
        #expect(Set(frames.filter { $0.kind == .report }.map(\.slot)) == [6])
    }

    // MARK: Capture

    private let air = SharedUWBAir(captureMargin: 10, codeIsolation: 6, range: 40)

    private func frame(round: Int, from: Int, to: Int?, at start: Double, code: UInt8 = 10, channel: UInt8 = 9) -> UWBAirFrame {
        UWBAirFrame(
            kind: .poll, round: round, slot: 1, channel: channel, preambleCode: code, transmitter: from, receiver: to, start: start,
            end: start + 140)
    }

    /// Levels by transmitter at the receiver (body 0): 1 is the wanted sender.
    private func lost(_ wanted: UWBAirFrame, _ others: [UWBAirFrame], levels: [Int: Double]) -> Bool {
        air.lost(wanted, among: [wanted] + others, link: { from, _ in (from == 9 ? 50 : 5, levels[from]!) })
    }

    @Test func aFrameSurvivesOnlyWhatItOutshinesByTheMargin() {
        let wanted = frame(round: 1, from: 1, to: 0, at: 0)
        #expect(!lost(wanted, [], levels: [1: -80]))
        #expect(lost(wanted, [frame(round: 2, from: 2, to: 3, at: 100)], levels: [1: -70, 2: -75]))
        #expect(!lost(wanted, [frame(round: 2, from: 2, to: 3, at: 100)], levels: [1: -70, 2: -80]))
        // not overlapping: nothing happens, however strong
        #expect(!lost(wanted, [frame(round: 2, from: 2, to: 3, at: 141)], levels: [1: -80, 2: -40]))
        // another channel does not interfere; another code counts 6 dB weaker
        #expect(!lost(wanted, [frame(round: 2, from: 2, to: 3, at: 0, channel: 5)], levels: [1: -80, 2: -40]))
        #expect(!lost(wanted, [frame(round: 2, from: 2, to: 3, at: 0, code: 11)], levels: [1: -70, 2: -75]))
        #expect(lost(wanted, [frame(round: 2, from: 2, to: 3, at: 0, code: 11)], levels: [1: -70, 2: -70]))
        // beyond the UWB range a transmitter is not heard at all
        #expect(!lost(wanted, [frame(round: 2, from: 9, to: 3, at: 0)], levels: [1: -80, 9: -60]))
    }

    @Test func interferersAddUpAndABroadcastCountsOnce() {
        let wanted = frame(round: 1, from: 1, to: 0, at: 0)
        // each 12 dB below: one is captured over, two add up to 9 dB below
        let two = [frame(round: 2, from: 2, to: 5, at: 0), frame(round: 3, from: 3, to: 5, at: 0)]
        #expect(lost(wanted, two, levels: [1: -60, 2: -72, 3: -72]))
        // one frame heard by two bodies is on the air once
        let broadcast = [frame(round: 2, from: 2, to: 5, at: 0), frame(round: 2, from: 2, to: 6, at: 0)]
        #expect(!lost(wanted, broadcast, levels: [1: -60, 2: -72]))
    }

    @Test func aReceiverThatTransmitsHearsNothing() {
        let wanted = frame(round: 1, from: 1, to: 0, at: 0)
        #expect(lost(wanted, [frame(round: 2, from: 0, to: 4, at: 50, channel: 5)], levels: [1: -40, 0: -100]))
        // its own round's frames never count against it
        var sameRound = frame(round: 1, from: 0, to: 1, at: 50)
        sameRound.slot = 2
        #expect(!lost(wanted, [sameRound], levels: [1: -40, 0: -40]))
    }

    // MARK: Round hopping

    /// A hopping session's round sits in one of the block's rounds (RANGING_DURATION 100 ms over
    /// 6 slots of 2400 RSTU = 12 ms: 8 of them), a new one per block, and over many blocks in
    /// each of them; a session that does not hop keeps its place. Two sessions meet in about one
    /// block in eight, not in every block as two sessions without hopping whose rounds overlap.
    @Test func aHoppingSessionsRoundMovesWithinTheBlock() {
        func session(id: UInt32, hops: Bool) -> VirtualUWBS.Session {
            var session = VirtualUWBS.Session(id: id, handle: 1, state: .active)
            session.config = [
                .rangingDuration: [100, 0, 0, 0], .slotDuration: [0x60, 0x09], .slotsPerRangingRound: [6], .hoppingMode: [hops ? 1 : 0],
            ]
            return session
        }
        func offset(_ session: VirtualUWBS.Session, block: Int64) -> Double {
            World.hopOffset(session, timing: UWBFrameTiming(config: session.config), block: block)
        }
        let blocks = Int64(0)..<800
        let a = blocks.map { offset(session(id: 0x1234_5678, hops: true), block: $0) }
        let b = blocks.map { offset(session(id: 0x0BAD_CAFE, hops: true), block: $0) }
        let round = 12_000.0
        #expect(Set(a) == Set((0..<8).map { Double($0) * round }))
        #expect(zip(a, a.dropFirst()).filter { $0 == $1 }.count < 200)
        let met = zip(a, b).filter { $0 == $1 }.count
        #expect(met > 50 && met < 150)
        #expect(blocks.allSatisfy { offset(session(id: 0x1234_5678, hops: false), block: $0) == 0 })
    }

    // MARK: In the world

    /// Two bodies share the air with nothing else: the stream is the private air's, line for line.
    @Test func anEmptyHallChangesNothing() async throws {
        var scenario = try Scenario.builtIn("meetup")
        scenario.nodes.removeLast(scenario.nodes.count - 2)
        var ideal = scenario
        ideal.radio = ideal.radio ?? RadioModel()
        ideal.radio!.sharedAir = false
        scenario.radio = scenario.radio ?? RadioModel()
        scenario.radio!.sharedAir = true
        let shared = try await runScenario(scenario, ranges: true, duration: 30)
        #expect(shared.count > 100)
        #expect(shared.contains { $0.contains(#""type":"bump""#) })
        #expect(shared == (try await runScenario(ideal, ranges: true, duration: 30)))
    }

    /// The meetup's five bodies range in ten pairs on one channel: some rounds meet
    /// others on the air and are lost, the air is busy in proportion to the rounds, and private
    /// air loses none.
    @Test func aMeetupsRoundsMeetOnTheAir() async throws {
        let (driver, _) = fastDriver(try Scenario.builtIn("meetup"), ranges: false, duration: 30)
        try await driver.run()
        let statistics = driver.world.sharedAirStatistics
        #expect(statistics.rounds > 1000)
        #expect(statistics.lostRounds > statistics.rounds / 50)
        #expect(statistics.lostRounds < statistics.rounds / 2)
        let busy = statistics.busyMicroseconds[9] ?? 0
        #expect(busy > Double(statistics.rounds) * 600 && busy < Double(statistics.rounds) * 800)  // ~5 frames of ~140 µs

        var ideal = try Scenario.builtIn("meetup")
        ideal.radio = ideal.radio ?? RadioModel()
        ideal.radio!.sharedAir = false
        let (private_, _) = fastDriver(ideal, ranges: false, duration: 30)
        try await private_.run()
        #expect(private_.world.sharedAirStatistics.rounds == 0)
    }
}
