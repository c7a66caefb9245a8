import Bridge
import Proximity
import Synchronization
import UCI

/// The world's shared UWB air (docs/PROXIMITY.md, "Shared air"): where each round's frames sit
/// on the air, and which of them other frames cost their receivers.
extension World {
    /// Lays out on the air every active controller session's rounds around those due now. The
    /// world runs rounds on its step grid, where sessions started by nodes acting at the same step
    /// would stay in lock step for ever; on the air each session's rounds keep their own phase
    /// within the interval, as sessions that boards started at unrelated moments do, and move on
    /// each board's own clock (`clockErrors`). A board runs one round at a time and knows when
    /// the rounds it joins as a controlee come: its own rounds start after its previous one ends
    /// and outside those (as planned before anyone moved: an approximation).
    func buildAir(_ s: inout State) {
        s.air = []
        s.airRounds = [:]
        s.airFramesOfRound = []
        var planned: [PlannedRound] = []
        for body in s.devices.keys.sorted() {
            for session in s.devices[body]!.uwbs.sessions.values.sorted(by: { $0.handle < $1.handle })
            where session.state == .active && session.isController {
                let controlees = session.isOneToMany
                    ? session.destinations.compactMap { findPartner(s, body: body, session: session, address: $0)?.0 }
                    : findPartner(s, body: body, session: session).map { [$0.0] } ?? []
                let interval = max(session.intervalMilliseconds, 1)
                var draw = SplitMix64(seed: UInt64(session.id) ^ UInt64(session.handle) << 32 ^ UInt64(body) << 48)
                let phase = Double(draw.next() % UInt64(interval * 1000))
                let shape = RoundShape(session)
                let length = frames(shape, body: body, controlees: controlees, round: 0, start: 0).map(\.end).max() ?? 0
                for k in Int64(-2)...1 {
                    let nominal = session.nextRoundMilliseconds + k * interval
                    let start = Double(nominal) * 1000 * (1 + clockErrors[body] * 1e-6) + phase
                        + Self.hopOffset(session, timing: shape.timing, block: nominal / interval)
                    planned.append(
                        PlannedRound(
                            key: AirRound(body: body, handle: session.handle, nominal: nominal), shape: shape, controlees: controlees,
                            start: start, length: length))
                }
            }
        }
        var joined: [Int: [(start: Double, end: Double)]] = [:]
        for round in planned {
            for controlee in round.controlees { joined[controlee, default: []].append((round.start, round.start + round.length)) }
        }
        let byBody = Dictionary(grouping: planned, by: \.key.body)
        for body in byBody.keys.sorted() {
            let busy = joined[body] ?? []
            var free = -Double.infinity
            for round in byBody[body]!.sorted(by: { ($0.start, $0.key.handle) < ($1.start, $1.key.handle) }) {
                var start = max(round.start, free)
                for _ in 0..<8 {
                    guard let clash = busy.first(where: { start < $0.end && $0.start < start + round.length }) else { break }
                    start = clash.end + Self.roundGapMicroseconds
                }
                let id = s.airFramesOfRound.count
                s.airRounds[round.key] = id
                let frames = frames(round.shape, body: body, controlees: round.controlees, round: id, start: start)
                free = (frames.map(\.end).max() ?? start) + Self.roundGapMicroseconds
                s.air += frames
                s.airFramesOfRound.append(frames)
            }
        }
        s.air.sort { $0.start < $1.start }
        s.airLongestFrame = s.air.map { $0.end - $0.start }.max() ?? 0
    }

    /// The frames on the air that can overlap `frame`: those starting within the longest frame
    /// before it, up to its end (a binary search in the frames by start).
    private func airAround(_ frame: UWBAirFrame, _ s: borrowing State) -> ArraySlice<UWBAirFrame> {
        func firstIndex(startingAtOrAfter time: Double) -> Int {
            var (low, high) = (0, s.air.count)
            while low < high {
                let middle = (low + high) / 2
                if s.air[middle].start < time { low = middle + 1 } else { high = middle }
            }
            return low
        }
        return s.air[firstIndex(startingAtOrAfter: frame.start - s.airLongestFrame)..<firstIndex(startingAtOrAfter: frame.end)]
    }

    /// Between two rounds of one board.
    static let roundGapMicroseconds = 100.0

    /// Where a hopping session's round sits in ranging block `block` (µs after the block's
    /// start): FiRa round hopping divides the block (RANGING_DURATION) into rounds of
    /// SLOTS_PER_RR slots and runs each block's ranging in one of them, chosen anew per block by
    /// a sequence both boards follow. The world draws it from the session id and block index,
    /// not FiRa's own sequence: what matters on the air is that two sessions which meet in one
    /// block are unlikely to meet in the next. Zero for a session that does not hop.
    static func hopOffset(_ session: VirtualUWBS.Session, timing: UWBFrameTiming, block: Int64) -> Double {
        guard session.hops else { return 0 }
        let round = Double(session.config[.slotsPerRangingRound]?.first ?? 6) * timing.slotMicroseconds
        let rounds = UInt64(max(1, Double(max(session.intervalMilliseconds, 1)) * 1000 / round))
        var draw = SplitMix64(seed: UInt64(session.id) << 32 ^ UInt64(bitPattern: block))
        return Double(draw.next() % rounds) * round
    }

    private struct PlannedRound {
        var key: AirRound
        var shape: RoundShape
        var controlees: [Int]
        var start: Double
        var length: Double
    }

    /// What a session's config says of its rounds on the air, read once per session and step.
    private struct RoundShape {
        var timing: UWBFrameTiming
        var channel: UInt8
        var preambleCode: UInt8
        var controllerInitiates: Bool

        init(_ session: VirtualUWBS.Session) {
            timing = UWBFrameTiming(config: session.config)
            channel = session.config[.channelNumber]?.first ?? 9
            preambleCode = session.config[.preambleCodeIndex]?.first ?? 10
            controllerInitiates = session.config[.deviceRole] != [0]
        }
    }

    private func frames(_ shape: RoundShape, body: Int, controlees: [Int], round: Int, start: Double) -> [UWBAirFrame] {
        SharedUWBAir.roundFrames(
            round: round, start: start, timing: shape.timing, channel: shape.channel, preambleCode: shape.preambleCode, controller: body,
            controllerInitiates: shape.controllerInitiates, controlees: controlees)
    }

    /// The bodies of a round now due whose measurement is lost on the shared air, and those
    /// that miss only the report; counted in the statistics.
    func airLosses(_ s: inout State, body: Int, session: VirtualUWBS.Session) -> (measurement: Set<Int>, report: Set<Int>) {
        guard radio.sharedAir, let id = s.airRounds[AirRound(body: body, handle: session.handle, nominal: session.nextRoundMilliseconds)]
        else { return ([], []) }
        let now = s.now
        let budget = LinkBudget(levelAtOneMetreDBm: radio.levelAtOneMetre)
        var measurement: Set<Int> = []
        var report: Set<Int> = []
        var counted: Set<Int> = []
        let link = { (from: Int, to: Int) -> (metres: Double, level: Double) in
            let metres = self.distance(between: from, and: to, at: now)
            return (metres, budget.level(atMetres: metres))
        }
        for frame in s.airFramesOfRound[id] {
            if counted.insert(frame.slot).inserted {
                s.airStatistics.busyMicroseconds[frame.channel, default: 0] += frame.end - frame.start
            }
            guard air.lost(frame, among: airAround(frame, s), link: link) else { continue }
            let controlee = frame.transmitter == body ? frame.receiver! : frame.transmitter
            if frame.kind == .report { report.insert(frame.receiver!) } else { measurement.insert(controlee) }
        }
        s.airStatistics.rounds += 1
        if !measurement.isEmpty { s.airStatistics.lostRounds += 1 }
        return (measurement, report)
    }
}
