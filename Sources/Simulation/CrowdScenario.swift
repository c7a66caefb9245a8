import Bridge
import Glibc

extension Scenario {
    /// An event hall: one rig at the origin and `visitors` people milling about at 2-20 m. Half
    /// are in the hall from the start, half walk in from just outside Bluetooth range during the
    /// first fifth; half leave during the last fifth. Every `bumpEvery`-th visitor walks up to the
    /// rig once, touches it for three seconds and steps back. Visitors are `crowd` nodes (they only
    /// deal with the rig), so the world stays linear in size. Seeded: the same arguments give the
    /// same hall. `sharedAir` false gives every round, advert and connection private air: a
    /// thousand visitors advertising every 130 ms fill BLE's advertising channels (one advertising
    /// event in ~300 would reach the rig), so the software's scaling is measured without it.
    package static func crowd(
        visitors: Int, duration: Double, seed: UInt64 = 1, bumpEvery: Int = 20, rigSessions: Int? = nil, sharedAir: Bool = true
    ) -> Scenario {
        var random = SplitMix64(seed: seed)
        func point(from near: Double, to far: Double) -> (x: Double, y: Double) {
            let r = near + (far - near) * random.unit()
            let a = 2 * Double.pi * random.unit()
            return (r * cos(a), r * sin(a))
        }
        /// The distance from the rig (the origin) to the straight walk from `a` to `b`.
        func closestToTheRig(_ a: (x: Double, y: Double), _ b: (x: Double, y: Double)) -> Double {
            let (dx, dy) = (b.x - a.x, b.y - a.y)
            let along = max(0, min(1, -(a.x * dx + a.y * dy) / max(dx * dx + dy * dy, 1e-12)))
            let (x, y) = (a.x + along * dx, a.y + along * dy)
            return (x * x + y * y).squareRoot()
        }
        var nodes = [Node(name: "rig", path: [Waypoint(t: 0, x: 0, y: 0)], uwbSessions: rigSessions)]
        for index in 0..<visitors {
            let inside = random.unit() < 0.5
            let arrive = inside ? 0 : duration * 0.2 * random.unit()
            let leave = random.unit() < 0.5 ? duration * (0.8 + 0.2 * random.unit()) : duration + 60
            var t = arrive
            let start = inside ? point(from: 2, to: 20) : point(from: 32, to: 35)
            var path = [Waypoint(t: 0, x: start.x, y: start.y), Waypoint(t: t, x: start.x, y: start.y)]
            func walk(to p: (x: Double, y: Double), speed: Double = 1.2) {
                let last = path[path.count - 1]
                t += ((p.x - last.x) * (p.x - last.x) + (p.y - last.y) * (p.y - last.y)).squareRoot() / speed
                path.append(Waypoint(t: t, x: p.x, y: p.y))
            }
            /// A destination `near`–`far` from the rig whose straight walk passes at least a metre
            /// from it: the rig stands on a table, visitors walk round it, and a walk straight
            /// through it would be a touch nobody meant.
            func destination(from near: Double, to far: Double) -> (x: Double, y: Double) {
                let here = (x: path[path.count - 1].x, y: path[path.count - 1].y)
                var candidate = point(from: near, to: far)
                for _ in 0..<50 where closestToTheRig(here, candidate) < 1 { candidate = point(from: near, to: far) }
                return candidate
            }
            func stay(_ seconds: Double) {
                t += seconds
                path.append(Waypoint(t: t, x: path[path.count - 1].x, y: path[path.count - 1].y))
            }
            let bumps = bumpEvery > 0 && index % bumpEvery == 0
            // Touch somewhere in the middle of the visit; start walking up at the latest 30 s
            // before the visit (or the scenario) ends, so the touch is over by then.
            let end = min(leave, duration)
            let bumpAt = arrive + max(0, end - 40 - arrive) * (0.2 + 0.6 * random.unit())
            var bumped = false
            while t < end {
                if bumps, !bumped, t >= bumpAt || t >= end - 30 {
                    walk(to: destination(from: 2.5, to: 3.5))
                    walk(to: (0.03, 0), speed: 0.6)
                    stay(3)
                    walk(to: point(from: 3, to: 6), speed: 0.6)
                    bumped = true
                } else {
                    walk(to: destination(from: 2, to: 20), speed: 0.8)
                    stay(5 + 15 * random.unit())
                }
            }
            if leave < duration { walk(to: point(from: 32, to: 35)) }
            nodes.append(Node(name: "visitor-\(index)", path: path, card: nil, crowd: true))
        }
        var radio = RadioModel()
        radio.sharedAir = sharedAir
        return Scenario(name: "crowd-\(visitors)", duration: duration, radio: radio, nodes: nodes)
    }
}
