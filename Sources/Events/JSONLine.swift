/// Renders events as single JSON lines with a fixed key order, so identical event streams are
/// byte-identical (the golden tests depend on it) and `jq` users see a stable layout.
public enum JSONLine {
    /// Renders `event` stamped with `seq` and `ts` (ISO-8601 UTC, milliseconds), ending in "\n".
    public static func render(_ event: Event, seq: UInt64, timestampMilliseconds: Int64) -> String {
        var out = JSONObjectWriter()
        out.number("v", eventSchemaVersion)
        out.number("seq", seq)
        out.string("ts", ISO8601.string(millisecondsSinceEpoch: timestampMilliseconds))
        out.string("type", event.type)
        out.string("node", event.node)
        switch event.body {
        case .device(let device):
            out.string("radio", device.radio.rawValue)
            out.string("state", device.state.rawValue)
            out.string("backend", device.backend)
            var detail = JSONObjectWriter()
            for key in device.detail.keys.sorted() { detail.string(key, device.detail[key]!) }
            out.raw("detail", detail.finish())
        case .peerFound(let found):
            out.string("peer", found.peer)
            out.string("name", found.name)
            out.optionalNumber("rssi", found.rssi)
        case .range(let range):
            out.string("peer", range.peer)
            out.string("status", range.status)
            out.metres("distance", range.distance)
            out.metres("filtered", range.filtered)
            out.metres("rate", range.rate)
            out.optionalBool("nlos", range.nlos)
            out.degrees("azimuth", range.azimuth)
            out.degrees("elevation", range.elevation)
        case .near(let zone), .far(let zone):
            out.string("peer", zone.peer)
            out.metres("distance", zone.distance)
            out.degrees("azimuth", zone.azimuth)
        case .bump(let bump):
            out.string("peer", bump.peer)
            out.number("bump_id", bump.bumpID)
            out.metres("distance", bump.distance)
            out.raw("card", bump.cardJSON)
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
        }
        return out.finish() + "\n"
    }
}

/// Minimal writer for one flat JSON object; values are escaped per RFC 8259.
struct JSONObjectWriter {
    private var text = "{"
    private var first = true

    private mutating func key(_ name: String) {
        if !first { text += "," }
        first = false
        text += Self.quoted(name) + ":"
    }

    mutating func string(_ name: String, _ value: String) {
        key(name)
        text += Self.quoted(value)
    }

    mutating func optionalString(_ name: String, _ value: String?) {
        key(name)
        text += value.map(Self.quoted) ?? "null"
    }

    mutating func number(_ name: String, _ value: some BinaryInteger) {
        key(name)
        text += String(value)
    }

    mutating func optionalNumber(_ name: String, _ value: Int?) {
        key(name)
        text += value.map(String.init) ?? "null"
    }

    mutating func optionalBool(_ name: String, _ value: Bool?) {
        key(name)
        text += value.map { $0 ? "true" : "false" } ?? "null"
    }

    /// Metres (or metres per second) with millimetre resolution: finer digits are below any UWB
    /// radio's precision.
    mutating func metres(_ name: String, _ value: Double?) {
        key(name)
        text += value.map { Self.fixed($0, decimals: 3) } ?? "null"
    }

    /// Degrees with 0.1° resolution.
    mutating func degrees(_ name: String, _ value: Double?) {
        key(name)
        text += value.map { Self.fixed($0, decimals: 1) } ?? "null"
    }

    /// Inserts pre-rendered JSON (an object the caller has already validated).
    mutating func raw(_ name: String, _ json: String) {
        key(name)
        text += json
    }

    func finish() -> String { text + "}" }

    /// Fixed-point rendering without Foundation or locale: e.g. 1.5 -> "1.500", -0.0004 -> "0.000".
    static func fixed(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return "null" }
        var scale: Int64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int64((value * Double(scale)).rounded())
        let magnitude = scaled.magnitude
        let whole = magnitude / UInt64(scale)
        let fraction = String(magnitude % UInt64(scale))
        let padded = String(repeating: "0", count: decimals - fraction.count) + fraction
        return (scaled < 0 ? "-" : "") + "\(whole).\(padded)"
    }

    static func quoted(_ string: String) -> String {
        var out = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// ISO-8601 UTC timestamps without Foundation's formatters (which are locale- and thread-sensitive).
public enum ISO8601 {
    public static func string(millisecondsSinceEpoch ms: Int64) -> String {
        let millis = Int(((ms % 1000) + 1000) % 1000)
        let seconds = (ms - Int64(millis)) / 1000
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        func pad(_ v: Int64, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T"
            + "\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
            + ".\(pad(Int64(millis), 3))Z"
    }

    /// Proleptic Gregorian date from days since 1970-01-01 (Howard Hinnant's civil_from_days algorithm).
    static func civilDate(daysSinceEpoch: Int64) -> (Int64, Int64, Int64) {
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
