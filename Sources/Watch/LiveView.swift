import Events
import Foundation

/// What `nearby-bridge watch` shows, built from event lines alone (schema v1): per rig its
/// radios and what is being shed, per peer what that rig last said about it. Pure: lines and
/// times go in, screens come out, so the view is tested without a terminal.
///
/// Unknown event types and fields are ignored, as the schema asks of every consumer; a line
/// that is not a JSON object is counted and skipped.
package struct LiveView: Sendable {
    package struct Peer: Sendable, Equatable, Encodable {
        package var id: String
        package var name: String?
        /// The filtered distance of the last ranged round (the raw one when unfiltered).
        package var distance: Double?
        /// How fast the distance changes, metres per second, negative while the peer comes
        /// closer (`range`'s `rate`).
        package var rate: Double?
        /// Degrees, where the board measures direction.
        package var azimuth: Double?
        package var isNear = false
        /// From `nearest` (UWB) or `rough` (RSSI only).
        package var band: String?
        /// Ranged over UWB (true) or only heard over Bluetooth (false).
        package var ranged = false
        package var lastBump: Bump?
        /// Stream time (ms) of the last event about this peer.
        package var lastHeard: Int64
        package var lost: String?
    }

    package struct Bump: Sendable, Equatable, Encodable {
        package var id: Int
        package var at: Int64
        package var card: String?
    }

    package struct Rig: Sendable, Equatable, Encodable {
        package var node: String
        package var uwb: String?
        package var ble: String?
        package var peers: [String: Peer] = [:]
        package var shedRanges = 0
        package var shedInputs = 0
        package var lastBumpAt: Int64?
        /// What its last `stats` said of the UWB air: the share of rounds that failed, percent,
        /// and whether that is full; nil until one said.
        package var roundFailurePercent: Int?
        package var airFull: Bool?
    }

    package private(set) var rigs: [String: Rig] = [:]
    package private(set) var lines = 0
    package private(set) var unreadable = 0
    /// Stream time: the newest `ts` seen, in milliseconds since the epoch.
    package private(set) var latest: Int64?
    /// When each of the last 512 to 1024 lines came (stream time), for the rate in the footer.
    private var recent: [Int64] = []

    package init() {}

    /// What one event changes, whichever form it came in: a JSON line (`watch`) or a typed
    /// event (the web view, inside the process).
    enum Update {
        case device(radio: String?, state: String?, backend: String?)
        case found(peer: String, name: String?)
        case range(peer: String, distance: Double?, rate: Double?, azimuth: Double?)
        case zone(peer: String, near: Bool, distance: Double?)
        case bump(peer: String, id: Int, distance: Double?, card: String?)
        case band(peer: String?, band: String?, ranged: Bool)
        case lost(peer: String, reason: String)
        case stats(shedRanges: Int, shedInputs: Int, air: Event.Stats.Air?)
        /// A type this version does not know: counted, otherwise ignored (the schema's rule).
        case unknown
    }

    /// Takes one event line; false if it was not one (not JSON, no `type` or `node`).
    @discardableResult
    package mutating func apply(_ line: String) -> Bool {
        lines += 1
        guard let data = line.data(using: .utf8),
            let event = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let type = event["type"] as? String, let node = event["node"] as? String
        else {
            unreadable += 1
            return false
        }
        let ts = (event["ts"] as? String).flatMap(Self.milliseconds(iso8601:)) ?? latest ?? 0
        let peer = event["peer"] as? String
        let distance = event["distance"] as? Double
        let update: Update
        switch (type, peer) {
        case ("device", _):
            update = .device(radio: event["radio"] as? String, state: event["state"] as? String, backend: event["backend"] as? String)
        case ("peer.found", let peer?), ("peer.named", let peer?): update = .found(peer: peer, name: event["name"] as? String)
        case ("range", let peer?):
            update = .range(
                peer: peer, distance: (event["filtered"] as? Double) ?? distance, rate: event["rate"] as? Double,
                azimuth: event["azimuth"] as? Double)
        case ("near", let peer?), ("far", let peer?): update = .zone(peer: peer, near: type == "near", distance: distance)
        case ("bump", let peer?):
            update = .bump(
                peer: peer, id: event["bump_id"] as? Int ?? 0, distance: distance,
                card: (event["card"] as? [String: Any])?["name"] as? String)
        case ("nearest", _): update = .band(peer: peer, band: event["band"] as? String, ranged: true)
        case ("rough", let peer?): update = .band(peer: peer, band: event["band"] as? String, ranged: false)
        case ("peer.lost", let peer?): update = .lost(peer: peer, reason: event["reason"] as? String ?? "lost")
        case ("stats", _):
            let air = (event["round_failure_percent"] as? Int).map { Event.Stats.Air(roundFailurePercent: $0, full: event["air_full"] as? Bool ?? false) }
            update = .stats(shedRanges: event["shed_ranges"] as? Int ?? 0, shedInputs: event["shed_inputs"] as? Int ?? 0, air: air)
        default: update = .unknown
        }
        apply(update, node: node, at: ts)
        return true
    }

    /// Takes one typed event observed at `timestampMilliseconds`, as the web view does.
    package mutating func apply(_ event: Event, timestampMilliseconds ts: Int64) {
        lines += 1
        let update: Update
        switch event.body {
        case .device(let device): update = .device(radio: device.radio.rawValue, state: device.state.rawValue, backend: device.backend)
        case .peerFound(let found): update = .found(peer: found.peer, name: found.name)
        case .peerNamed(let named): update = .found(peer: named.peer, name: named.name)
        case .range(let range):
            update = .range(peer: range.peer, distance: range.filtered ?? range.distance, rate: range.rate, azimuth: range.azimuth)
        case .near(let zone): update = .zone(peer: zone.peer, near: true, distance: zone.distance)
        case .far(let zone): update = .zone(peer: zone.peer, near: false, distance: zone.distance)
        case .bump(let bump):
            let card = (try? JSONSerialization.jsonObject(with: Data(bump.cardJSON.utf8)) as? [String: Any])?["name"] as? String
            update = .bump(peer: bump.peer, id: Int(bump.bumpID), distance: bump.distance, card: card)
        case .nearest(let nearest): update = .band(peer: nearest.peer, band: nearest.band?.rawValue, ranged: true)
        case .rough(let rough): update = .band(peer: rough.peer, band: rough.band.rawValue, ranged: false)
        case .peerLost(let lost): update = .lost(peer: lost.peer, reason: lost.reason.rawValue)
        case .stats(let stats): update = .stats(shedRanges: stats.shedRanges, shedInputs: stats.shedInputs, air: stats.air)
        }
        apply(update, node: event.node, at: ts)
    }

    private mutating func apply(_ update: Update, node: String, at ts: Int64) {
        latest = max(latest ?? ts, ts)
        recent.append(ts)
        if recent.count > 1024 { recent.removeFirst(512) }  // in steps: not a shift per event
        // Taken out while it changes, so its peer table is not copied for every event.
        var rig = rigs.removeValue(forKey: node) ?? Rig(node: node)
        defer { rigs[node] = rig }
        func change(_ peerID: String, _ body: (inout Peer) -> Void) {
            var peer = rig.peers[peerID] ?? Peer(id: peerID, lastHeard: ts)
            peer.lastHeard = max(peer.lastHeard, ts)
            peer.lost = nil
            body(&peer)
            rig.peers[peerID] = peer
        }
        switch update {
        case .device(let radio, let state, let backend):
            let text = [state, backend.map { "(\($0))" }].compactMap { $0 }.joined(separator: " ")
            if radio == "uwb" { rig.uwb = text } else if radio == "ble" { rig.ble = text }
        case .found(let peer, let name):
            change(peer) { $0.name = name ?? $0.name }
        case .range(let peer, let distance, let rate, let azimuth):
            change(peer) { peer in
                guard let distance else { return }
                peer.distance = distance
                peer.rate = rate
                peer.azimuth = azimuth
                peer.ranged = true
            }
        case .zone(let peer, let near, let distance):
            change(peer) { peer in
                peer.isNear = near
                if let distance { peer.distance = distance }
                peer.ranged = true
            }
        case .bump(let peer, let id, let distance, let card):
            change(peer) { peer in
                peer.lastBump = Bump(id: id, at: ts, card: card)
                if let distance { peer.distance = distance }
            }
            rig.lastBumpAt = ts
        case .band(let peer?, let band, let ranged):
            change(peer) { peer in
                peer.band = band
                if !ranged, !peer.ranged { peer.distance = nil }
            }
        case .band(nil, _, _):
            break
        case .lost(let peer, let reason):
            rig.peers[peer]?.lost = reason
        case .stats(let shedRanges, let shedInputs, let air):
            rig.shedRanges += shedRanges
            rig.shedInputs += shedInputs
            if let air { (rig.roundFailurePercent, rig.airFull) = (air.roundFailurePercent, air.full) }
        case .unknown:
            break
        }
    }

    /// Events per second over the last ten seconds of stream time.
    package func rate(now: Int64) -> Double {
        let window = recent.filter { $0 > now - 10_000 }
        return Double(window.count) / 10
    }

    // MARK: Rendering

    /// The screen at stream time `now`: at most `height` lines, none wider than `width`
    /// characters. With `styled`, the row of a bump younger than `highlight` milliseconds is in
    /// reverse video; the latest bump of each rig is marked `*` either way.
    package func screen(width: Int, height: Int, now: Int64, highlight: Int64, styled: Bool) -> [String] {
        var rows: [(text: String, reverse: Bool)] = []
        let peerCount = rigs.values.reduce(0) { $0 + $1.peers.values.filter { $0.lost == nil }.count }
        rows.append((Self.fit("nearby-bridge watch   \(rigs.count) rig\(rigs.count == 1 ? "" : "s"), \(peerCount) peer\(peerCount == 1 ? "" : "s"), \(String(format: "%.1f", rate(now: now))) events/s", width), false))
        for rig in rigs.values.sorted(by: { $0.node < $1.node }) {
            rows.append(("", false))
            rows.append((Self.fit("rig \(rig.node)  uwb \(rig.uwb ?? "?")  ble \(rig.ble ?? "?")" + Self.air(rig), width), false))
            rows.append((Self.fit(Self.header(), width), false))
            let peers = rig.peers.values.sorted { a, b in
                if (a.lost == nil) != (b.lost == nil) { return a.lost == nil }
                return (a.distance ?? .infinity, a.id) < (b.distance ?? .infinity, b.id)
            }
            for peer in peers {
                let fresh = peer.lastBump.map { now - $0.at < highlight } ?? false
                rows.append((Self.fit(row(peer, rig: rig, now: now), width), styled && fresh))
            }
        }
        var screen = Array(rows.prefix(max(height - 1, 0)))
        let shed = rigs.values.reduce((0, 0)) { ($0.0 + $1.shedRanges, $0.1 + $1.shedInputs) }
        if rows.count > screen.count { screen[screen.count - 1] = (Self.fit("  … \(rows.count - screen.count + 1) more lines", width), false) }
        while screen.count < height - 1 { screen.append(("", false)) }
        screen.append((Self.fit("q quits   lines \(lines)   unreadable \(unreadable)   shed ranges \(shed.0) inputs \(shed.1)", width), false))
        return screen.map { styled && $0.reverse ? "\u{1B}[7m" + $0.text + "\u{1B}[0m" : $0.text }
    }

    /// The rig's air as its last `stats` said, or nothing before one did.
    static func air(_ rig: Rig) -> String {
        guard let percent = rig.roundFailurePercent else { return "" }
        return "  air \(percent) % of rounds failed" + (rig.airFull == true ? ", full" : "")
    }

    /// Column widths: 78 characters in all, so a row fits an 80-column terminal.
    private static let columns = (name: 14, distance: 6, bar: 10, zone: 4, band: 9, rate: 4, radio: 3, bump: 13)

    private static func header() -> String {
        let c = columns
        return "  " + [
            pad("PEER", c.name), pad("DIST", c.distance), pad("0 ─── 2 m", c.bar), pad("ZONE", c.zone), pad("BAND", c.band),
            pad("M/S", c.rate), pad("VIA", c.radio), pad("BUMP", c.bump), "SEEN",
        ].joined(separator: " ")
    }

    private func row(_ peer: Peer, rig: Rig, now: Int64) -> String {
        let c = Self.columns
        let name = (peer.name.map { String($0.prefix(c.name - 9)) + " " } ?? "") + String(peer.id.prefix(8))
        let mark = peer.lastBump != nil && peer.lastBump?.at == rig.lastBumpAt ? "*" : " "
        return "  " + [
            Self.pad(name, c.name),
            Self.pad(peer.distance.map { String(format: "%.2fm", $0) } ?? "-", c.distance),
            Self.pad(peer.distance.map(Self.bar) ?? "", c.bar),
            Self.pad(peer.lost.map { _ in "lost" } ?? (peer.ranged ? (peer.isNear ? "near" : "far") : "-"), c.zone),
            Self.pad(peer.band ?? "-", c.band),
            Self.pad(peer.rate.map { String(format: "%+.1f", $0) } ?? "-", c.rate),
            Self.pad(peer.ranged ? "uwb" : "ble", c.radio),
            Self.pad(peer.lastBump.map { "\(mark)#\($0.id) \(Self.age(now - $0.at)) \($0.card ?? "")" } ?? "-", c.bump),
            peer.lost.map { "lost (\($0))" } ?? Self.age(now - peer.lastHeard),
        ].joined(separator: " ")
    }

    /// A bar for 0 to 2 m in 10 cells of eighths.
    static func bar(_ metres: Double) -> String {
        let eighths = Int((min(max(metres, 0), 2) / 2 * 80).rounded())
        let partial = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"][eighths % 8]
        return String(repeating: "█", count: eighths / 8) + partial
    }

    static func age(_ milliseconds: Int64) -> String {
        let seconds = max(milliseconds, 0) / 1000
        if seconds < 60 { return "\(seconds)s" }
        if seconds < 3600 { return "\(seconds / 60)m" }
        return "\(seconds / 3600)h"
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? String(text.prefix(width)) : text + String(repeating: " ", count: width - text.count)
    }

    static func fit(_ text: String, _ width: Int) -> String {
        text.count > width ? String(text.prefix(width)) : text
    }

    // MARK: Plain lines

    /// One line for an event worth a line when stdout is not a terminal (found, near, far,
    /// bump, lost, device), nil for the others (range, nearest, rough, stats, unknown types).
    package static func plainLine(_ line: String) -> String? {
        guard let data = line.data(using: .utf8),
            let event = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let type = event["type"] as? String, let node = event["node"] as? String
        else { return nil }
        let time = (event["ts"] as? String).map { String($0.dropFirst(11).prefix(12)) } ?? "-"
        let peer = (event["peer"] as? String).map { " peer \($0)" } ?? ""
        let distance = (event["distance"] as? Double).map { String(format: " %.2f m", $0) } ?? ""
        switch type {
        case "device":
            return "\(time) rig \(node) \(event["radio"] as? String ?? "?") \(event["state"] as? String ?? "?")"
        case "peer.found":
            return "\(time) rig \(node) found\(peer) \(event["name"] as? String ?? "")"
        case "near", "far":
            return "\(time) rig \(node) \(type)\(peer)\(distance)"
        case "bump":
            let card = (event["card"] as? [String: Any])?["name"] as? String
            return "\(time) rig \(node) BUMP #\(event["bump_id"] as? Int ?? 0)\(peer)\(distance)\(card.map { " card \($0)" } ?? "")"
        case "peer.lost":
            return "\(time) rig \(node) lost\(peer) (\(event["reason"] as? String ?? "?"))"
        default:
            return nil
        }
    }

    /// Milliseconds since the epoch of an event's `ts` (`2026-01-01T00:00:00.123Z`).
    static func milliseconds(iso8601 text: String) -> Int64? {
        let utf8 = Array(text.utf8)
        guard utf8.count == 24, utf8[23] == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int? { Int(String(decoding: utf8[range], as: UTF8.self)) }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16), let second = number(17..<19), let millisecond = number(20..<23)
        else { return nil }
        // Days since 1970-01-01 (Howard Hinnant's days_from_civil).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        return Int64(((days * 24 + hour) * 60 + minute) * 60 + second) * 1000 + Int64(millisecond)
    }
}
