import Bridge

/// Draws traces of each kind. Every number a situation uses is drawn here, from ranges stated in
/// the doc comments of `Trace.Kind` and in docs/PROXIMITY.md.
package struct TraceGenerator {
    package var random: SplitMix64
    /// Thresholds the ground truth refers to (bump threshold, clearance, near/far).
    package var bumpMetres: Double
    package var clearMetres: Double
    package var nearMetres: Double
    package var farMetres: Double
    /// How long a bump gesture's peer stands before approaching, seconds.
    package var leadSeconds: ClosedRange<Double> = 2...60

    package init(seed: UInt64, bumpMetres: Double, clearMetres: Double, nearMetres: Double, farMetres: Double) {
        random = SplitMix64(seed: seed)
        self.bumpMetres = bumpMetres
        self.clearMetres = clearMetres
        self.nearMetres = nearMetres
        self.farMetres = farMetres
    }

    private mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * random.unit()
    }

    package mutating func make(_ kind: Trace.Kind) -> Trace {
        switch kind {
        case .approachAndBump: approachAndBump()
        case .handOver: handOver()
        case .passBy: passBy()
        case .tableNeighbour: still(.tableNeighbour, around: uniform(0.30...0.60), sway: 0...0.05)
        case .walkingGroup: walkingGroup()
        case .boundary: still(.boundary, around: random.unit() < 0.5 ? nearMetres : farMetres, sway: -0.02...0.02)
        case .atClearance: still(.atClearance, around: clearMetres, sway: 0...0)
        case .standingClose: still(.standingClose, around: uniform(0.31...0.37), sway: 0...0.03)
        case .nearZone: nearZone()
        }
    }

    /// Stand at 0.5–1.5 m for 2–60 s (`leadSeconds`: just arrived, or chatting for a while), approach at 0.3–1.0 m/s to touch (0–3 cm between the
    /// antennas), stay in contact 0.3–1.2 s (one gesture in ten: 10–60 s, devices left together),
    /// part at 0.3–1.0 m/s to 0.5–1.5 m and stay 3 s.
    package mutating func approachAndBump() -> Trace {
        let start = uniform(0.5...1.5)
        let lead = uniform(leadSeconds)
        let contactDistance = uniform(0...0.03)
        let touch = lead + (start - contactDistance) / uniform(0.3...1.0)
        let parted = touch + (random.unit() < 0.1 ? uniform(10...60) : uniform(0.3...1.2))
        let end = uniform(0.5...1.5)
        let away = parted + (end - contactDistance) / uniform(0.3...1.0)
        let trace = Trace(
            kind: .approachAndBump,
            path: [(0, start), (lead, start), (touch, contactDistance), (parted, contactDistance), (away, end), (away + 3, end)],
            contacts: [])
        let window = trace.firstTime(atOrBelow: clearMetres, from: 0)!...trace.firstTime(atOrAbove: clearMetres, from: parted)!
        let contact = Trace.Contact(
            touch: touch, parted: parted, window: window, withinThreshold: trace.firstTime(atOrBelow: bumpMetres, from: 0)!)
        return Trace(kind: trace.kind, path: trace.path, contacts: [contact])
    }

    /// From 0.6–1.5 m (after 2–5 s) reach to `closest` (10–40 cm unless given) at 0.3–1.0 m/s,
    /// hold 1–3 s, retreat.
    package mutating func handOver(closest given: Double? = nil) -> Trace {
        let start = uniform(0.6...1.5)
        let lead = uniform(2...5)
        let closest = given ?? uniform(0.10...0.40)
        let arrive = lead + (start - closest) / uniform(0.3...1.0)
        let leave = arrive + uniform(1...3)
        let away = leave + (start - closest) / uniform(0.3...1.0)
        return Trace(kind: .handOver, path: [(0, start), (lead, start), (arrive, closest), (leave, closest), (away, start), (away + 3, start)], contacts: [])
    }

    /// A straight walk or run at 0.8–3 m/s passing at 0.3–3 m, from 8 m before to 8 m after.
    mutating func passBy() -> Trace {
        let closest = uniform(0.3...3.0)
        let speed = uniform(0.8...3.0)
        let duration = 16 / speed
        let path = stride(from: 0.0, through: duration, by: 0.05).map { t in
            let along = speed * t - 8
            return (t, (closest * closest + along * along).squareRoot())
        }
        return Trace(kind: .passBy, path: path, contacts: [])
    }

    /// An hour still at `around` plus a slow sway within `sway` (a new offset every 2–8 s).
    mutating func still(
        _ kind: Trace.Kind, around base: Double, sway: ClosedRange<Double>, arriving arrival: [(t: Double, d: Double)] = []
    ) -> Trace {
        var path = arrival.isEmpty ? [(t: 0.0, d: base + uniform(sway))] : arrival
        while path.last!.t < 3600 { path.append((path.last!.t + uniform(2...8), base + uniform(sway))) }
        return Trace(kind: kind, path: path, contacts: [])
    }

    /// Walk in from 2 m at 0.5–1.0 m/s to 1.0–1.2 m and stand there for an hour, swaying ±2 cm.
    mutating func nearZone() -> Trace {
        let spot = uniform(1.0...1.2)
        let arrive = 3 + (2 - spot) / uniform(0.5...1.0)
        return still(.nearZone, around: spot, sway: -0.02...0.02, arriving: [(0, 2), (3, 2), (arrive, spot)])
    }

    /// Ten minutes walking together: a new spacing every 1–4 s, a step of σ 15 cm from the last,
    /// kept within 0.3–1.5 m.
    mutating func walkingGroup() -> Trace {
        var path: [(t: Double, d: Double)] = [(0, uniform(0.5...1.2))]
        while path.last!.t < 600 {
            var next = path.last!.d + 0.15 * random.gaussian()
            if next < 0.3 { next = 0.6 - next }
            if next > 1.5 { next = 3.0 - next }
            path.append((path.last!.t + uniform(1...4), min(max(next, 0.3), 1.5)))
        }
        return Trace(kind: .walkingGroup, path: path, contacts: [])
    }
}
