/// Renders events as single JSON lines with a fixed key order, so identical event streams are
/// byte-identical (the golden tests depend on it) and `jq` users see a stable layout.
package enum JSONLine {
    /// Renders `event` stamped with `seq` and `ts` (ISO-8601 UTC, milliseconds), ending in "\n".
    package static func render(_ event: Event, seq: UInt64, timestampMilliseconds: Int64) -> String {
        var scratch: [UInt8] = []
        return render(event, seq: seq, timestampMilliseconds: timestampMilliseconds, scratch: &scratch)
    }

    /// The same, building the line in `scratch`: a sink that keeps its scratch buffer renders
    /// each line with one allocation (the `String`) instead of two or three.
    package static func render(_ event: Event, seq: UInt64, timestampMilliseconds: Int64, scratch: inout [UInt8]) -> String {
        scratch.removeAll(keepingCapacity: true)
        append(event, seq: seq, timestampMilliseconds: timestampMilliseconds, to: &scratch)
        return String(decoding: scratch, as: UTF8.self)
    }

    /// Appends the line to `bytes`, with no `String` at all: the buffered sink renders a batch
    /// into one kept buffer and writes it as it is.
    package static func append(_ event: Event, seq: UInt64, timestampMilliseconds: Int64, to bytes: inout [UInt8]) {
        var buffer: [UInt8] = []
        swap(&buffer, &bytes)
        var out = JSONObjectWriter(appendingTo: consume buffer)
        defer { bytes = out.takeBuffer() }
        out.number("v", eventSchemaVersion)
        out.number("seq", seq)
        out.timestamp("ts", millisecondsSinceEpoch: timestampMilliseconds)
        out.string("type", event.type)
        out.string("node", event.node)
        switch event.body {
        case .device(let device):
            out.string("radio", device.radio.rawValue)
            out.string("state", device.state.rawValue)
            out.string("backend", device.backend)
            let detail = device.detail.keys.sorted().map { JSONObjectWriter.quoted($0) + ":" + JSONObjectWriter.quoted(device.detail[$0]!) }
            out.raw("detail", "{" + detail.joined(separator: ",") + "}")
        case .peerFound(let found):
            out.string("peer", found.peer)
            out.string("name", found.name)
            out.optionalNumber("rssi", found.rssi)
            if let phone = found.phone { out.phone(phone) }
        case .peerNamed(let named):
            out.string("peer", named.peer)
            out.string("name", named.name)
        case .range(let range):
            out.string("peer", range.peer)
            out.string("status", range.status)
            out.metres("distance", range.distance)
            out.metres("filtered", range.filtered)
            out.metres("rate", range.rate)
            out.optionalBool("nlos", range.nlos)
            out.degrees("azimuth", range.azimuth)
            out.degrees("elevation", range.elevation)
            out.decibels("rssi", range.rssi)
        case .near(let zone), .far(let zone):
            out.string("peer", zone.peer)
            out.metres("distance", zone.distance)
            out.degrees("azimuth", zone.azimuth)
        case .bump(let bump):
            out.string("peer", bump.peer)
            out.number("bump_id", bump.bumpID)
            out.metres("distance", bump.distance)
            out.raw("card", bump.cardJSON)
            if let phone = bump.phone {
                out.string("decided_by", "rig")
                out.phone(phone)
            }
        case .peerLost(let lost):
            out.string("peer", lost.peer)
            out.string("reason", lost.reason.rawValue)
        case .nearest(let nearest):
            out.optionalString("peer", nearest.peer)
            out.metres("distance", nearest.distance)
            out.optionalString("band", nearest.band?.rawValue)
        case .rough(let rough):
            out.string("peer", rough.peer)
            out.number("rssi", rough.rssi)
            out.string("band", rough.band.rawValue)
        case .stats(let stats):
            out.number("peers", stats.peers)
            out.number("ranging", stats.ranging)
            out.number("budget", stats.budget)
            out.number("shed_ranges", stats.shedRanges)
            out.number("shed_inputs", stats.shedInputs)
            out.number("evicted", stats.evicted)
            // Written only when there were some: lines without it are those of schema v1 as it was.
            if stats.invalidReadings > 0 { out.number("invalid_readings", stats.invalidReadings) }
            // Written once the rig counted enough rounds to judge its air (`AirLoad`).
            if let air = stats.air {
                out.number("round_failure_percent", air.roundFailurePercent)
                out.optionalBool("air_full", air.full)
            }
        }
        out.close(suffix: "\n")
    }
}

extension JSONObjectWriter {
    /// A phone peer's fields: `kind`, `platform` and, when its app wrote one, `token`.
    fileprivate mutating func phone(_ phone: Event.Phone) {
        string("kind", "phone")
        string("platform", phone.platform.rawValue)
        if let token = phone.token { string("token", token) }
    }
}
