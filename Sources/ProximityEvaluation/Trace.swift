import Bridge

/// The true distance between two devices over time, as a scripted situation produces it, plus
/// the ground truth the evaluator scores against.
package struct Trace: Sendable {
    package enum Kind: String, Sendable, CaseIterable {
        /// Walk or reach up, touch for a moment (sometimes leave the devices together), move away.
        case approachAndBump = "approach-and-bump"
        /// Reach towards each other to 10–40 cm, hold, retreat: close, but no contact.
        case handOver = "hand-over"
        /// Someone walks or runs past at 0.3–3 m.
        case passBy = "pass-by"
        /// Neighbours at a table, 30–60 cm apart, swaying a few centimetres, for an hour.
        case tableNeighbour = "table"
        /// Walking side by side, 0.3–1.5 m apart and drifting.
        case walkingGroup = "walking group"
        /// Standing still (±2 cm) right at the near or the far threshold, for an hour.
        case boundary
        /// Standing still at exactly the clearance (30 cm) for an hour: the hardest non-contact case.
        case atClearance = "at clearance"
        /// Standing 30–40 cm apart for an hour, swaying a few centimetres (a chat over a phone).
        case standingClose = "standing at 30–40 cm"
        /// Walking up to 1.0–1.2 m (inside the near zone, short of the far threshold) and standing
        /// there for an hour: body shadowing must not flip the zone.
        case nearZone = "standing in the near zone"
    }

    /// A deliberate contact: the devices touch at `touch` and part at `parted`.
    package struct Contact: Sendable, Equatable {
        package var touch: Double
        package var parted: Double
        /// The gesture in full: from coming within the clearance to leaving it again.
        package var window: ClosedRange<Double>
        /// When the true distance first reached the bump threshold.
        package var withinThreshold: Double
    }

    package var kind: Kind
    /// (seconds, metres) waypoints, linearly interpolated.
    package var path: [(t: Double, d: Double)]
    package var contacts: [Contact]

    package var duration: Double { path.last?.t ?? 0 }
    /// The closest the devices come, metres.
    package var closest: Double { path.map(\.d).min() ?? .infinity }

    package func distance(at t: Double) -> Double {
        var low = 0
        var high = path.count - 1
        guard t > path[low].t else { return path[low].d }
        guard t < path[high].t else { return path[high].d }
        while high - low > 1 {
            let mid = (low + high) / 2
            if path[mid].t <= t { low = mid } else { high = mid }
        }
        let (a, b) = (path[low], path[high])
        return b.t > a.t ? a.d + (b.d - a.d) * (t - a.t) / (b.t - a.t) : b.d
    }

    /// First time at or after `from` that the distance is at or below `metres` (on a segment).
    func firstTime(atOrBelow metres: Double, from: Double) -> Double? {
        for (a, b) in zip(path, path.dropFirst()) where b.t >= from {
            if a.d <= metres, a.t >= from { return a.t }
            if b.d <= metres {
                guard a.d > metres else { return max(a.t, from) }
                return a.t + (b.t - a.t) * (a.d - metres) / (a.d - b.d)
            }
        }
        return nil
    }

    /// First time at or after `from` that the distance is at or above `metres`.
    func firstTime(atOrAbove metres: Double, from: Double) -> Double? {
        for (a, b) in zip(path, path.dropFirst()) where b.t >= from {
            if a.d >= metres, a.t >= from { return a.t }
            if b.d >= metres {
                guard a.d < metres else { return max(a.t, from) }
                return a.t + (b.t - a.t) * (metres - a.d) / (b.d - a.d)
            }
        }
        return nil
    }
}
