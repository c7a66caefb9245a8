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
        var buffer: [UInt8] = []
        swap(&buffer, &scratch)
        var out = JSONObjectWriter(reusing: consume buffer)
        defer { scratch = out.takeBuffer() }
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
        }
        return out.finish(suffix: "\n")
    }
}

/// Minimal writer for one flat JSON object; values are escaped per RFC 8259.
///
/// It appends UTF-8 straight into one byte buffer (numbers digit by digit, no intermediate
/// strings): a range event is rendered for every ranging round of every peer.
struct JSONObjectWriter {
    private var bytes: [UInt8]
    private var first = true

    /// A writer whose buffer is `buffer`'s storage (emptied, at least 256 bytes).
    init(reusing buffer: consuming [UInt8] = []) {
        bytes = consume buffer
        bytes.removeAll(keepingCapacity: true)
        bytes.reserveCapacity(256)
        bytes.append(UInt8(ascii: "{"))
    }

    /// The buffer, for the next writer to reuse.
    mutating func takeBuffer() -> [UInt8] {
        defer { bytes = [] }
        return bytes
    }

    private mutating func key(_ name: StaticString) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func string(_ name: StaticString, _ value: String) {
        key(name)
        Self.appendQuoted(value, to: &bytes)
    }

    mutating func optionalString(_ name: StaticString, _ value: String?) {
        key(name)
        if let value { Self.appendQuoted(value, to: &bytes) } else { appendNull() }
    }

    mutating func number(_ name: StaticString, _ value: some BinaryInteger) {
        key(name)
        Self.appendInteger(value, to: &bytes)
    }

    mutating func optionalNumber(_ name: StaticString, _ value: Int?) {
        key(name)
        if let value { Self.appendInteger(value, to: &bytes) } else { appendNull() }
    }

    mutating func optionalBool(_ name: StaticString, _ value: Bool?) {
        key(name)
        switch value {
        case true?: bytes.append(contentsOf: "true".utf8)
        case false?: bytes.append(contentsOf: "false".utf8)
        case nil: appendNull()
        }
    }

    /// Metres (or metres per second) with millimetre resolution: finer digits are below any UWB
    /// radio's precision.
    mutating func metres(_ name: StaticString, _ value: Double?) {
        key(name)
        Self.appendFixed(value, decimals: 3, to: &bytes)
    }

    /// Degrees with 0.1° resolution.
    mutating func degrees(_ name: StaticString, _ value: Double?) {
        key(name)
        Self.appendFixed(value, decimals: 1, to: &bytes)
    }

    /// Received levels (dBm) with 0.1 dB resolution (UCI reports them in 0.5 dB steps).
    mutating func decibels(_ name: StaticString, _ value: Double?) {
        key(name)
        Self.appendFixed(value, decimals: 1, to: &bytes)
    }

    /// Inserts pre-rendered JSON (an object the caller has already validated).
    mutating func raw(_ name: StaticString, _ json: String) {
        key(name)
        bytes.append(contentsOf: json.utf8)
    }

    /// The object, closed, followed by `suffix`. Closes the writer's own buffer (a copy would
    /// cost an allocation per line).
    mutating func finish(suffix: String = "") -> String {
        bytes.append(UInt8(ascii: "}"))
        bytes.append(contentsOf: suffix.utf8)
        return String(decoding: bytes, as: UTF8.self)
    }

    mutating func timestamp(_ name: StaticString, millisecondsSinceEpoch ms: Int64) {
        key(name)
        bytes.append(UInt8(ascii: "\""))
        ISO8601.append(millisecondsSinceEpoch: ms, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendNull() {
        bytes.append(contentsOf: "null".utf8)
    }

    /// Fixed-point rendering without Foundation or locale: e.g. 1.5 -> "1.500", -0.0004 -> "0.000".
    static func fixed(_ value: Double, decimals: Int) -> String {
        var out: [UInt8] = []
        appendFixed(value, decimals: decimals, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func appendFixed(_ value: Double?, decimals: Int, to out: inout [UInt8]) {
        guard let value, value.isFinite else {
            out.append(contentsOf: "null".utf8)
            return
        }
        var scale: UInt64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int64((value * Double(scale)).rounded())
        let magnitude = scaled.magnitude
        if scaled < 0 { out.append(UInt8(ascii: "-")) }
        appendInteger(magnitude / scale, to: &out)
        out.append(UInt8(ascii: "."))
        appendDigits(magnitude % scale, width: decimals, to: &out)
    }

    static func appendInteger(_ value: some BinaryInteger, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        let magnitude = UInt64(value.magnitude)
        var width = 1
        var limit: UInt64 = 10
        while width < 20, magnitude >= limit {
            width += 1
            limit = limit &* 10
        }
        appendDigits(magnitude, width: width, to: &out)
    }

    /// Exactly `width` decimal digits of `value`, zero-padded.
    static func appendDigits(_ value: UInt64, width: Int, to out: inout [UInt8]) {
        let start = out.count
        out.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: width))
        var rest = value
        var index = start + width - 1
        while index >= start {
            out[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
            index -= 1
        }
    }

    static func quoted(_ string: String) -> String {
        var out: [UInt8] = []
        appendQuoted(string, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func appendQuoted(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                out.append(contentsOf: "\\u00".utf8)
                let hex = Array("0123456789abcdef".utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            default: out.append(byte)  // UTF-8 above 0x7F passes through whole
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

/// ISO-8601 UTC timestamps without Foundation's formatters (which are locale- and thread-sensitive).
package enum ISO8601 {
    package static func string(millisecondsSinceEpoch ms: Int64) -> String {
        var out: [UInt8] = []
        append(millisecondsSinceEpoch: ms, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func append(millisecondsSinceEpoch ms: Int64, to out: inout [UInt8]) {
        let millis = ((ms % 1000) + 1000) % 1000
        let seconds = (ms - millis) / 1000
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        func digits(_ v: Int64, _ width: Int) { JSONObjectWriter.appendDigits(UInt64(max(0, v)), width: width, to: &out) }
        digits(year, 4)
        out.append(UInt8(ascii: "-"))
        digits(month, 2)
        out.append(UInt8(ascii: "-"))
        digits(day, 2)
        out.append(UInt8(ascii: "T"))
        digits(secondOfDay / 3600, 2)
        out.append(UInt8(ascii: ":"))
        digits(secondOfDay / 60 % 60, 2)
        out.append(UInt8(ascii: ":"))
        digits(secondOfDay % 60, 2)
        out.append(UInt8(ascii: "."))
        digits(millis, 3)
        out.append(UInt8(ascii: "Z"))
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
