/// Minimal writer for one flat JSON object; values are escaped per RFC 8259.
///
/// It appends UTF-8 straight into one byte buffer (numbers digit by digit, no intermediate
/// strings): a range event is rendered for every ranging round of every peer.
struct JSONObjectWriter {
    private var bytes: [UInt8]
    private var first = true

    /// A writer that appends its object to what `buffer` holds (a batch's lines go into one
    /// buffer, written as it is).
    init(appendingTo buffer: consuming [UInt8]) {
        bytes = consume buffer
        if bytes.capacity == 0 { bytes.reserveCapacity(256) }
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

    /// Closes the object and appends `suffix`.
    mutating func close(suffix: StaticString) {
        bytes.append(UInt8(ascii: "}"))
        suffix.withUTF8Buffer { bytes.append(contentsOf: $0) }
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

    /// Exactly `width` decimal digits of `value` (at most 20, all a `UInt64` has), zero-padded:
    /// written backwards into a buffer on the stack, then appended at once.
    static func appendDigits(_ value: UInt64, width: Int, to out: inout [UInt8]) {
        precondition(width <= 20, "a UInt64 has at most 20 digits")
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var rest = value
            var index = width - 1
            while index >= 0 {
                digits[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                index -= 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[0..<width]))
        }
    }

    static func quoted(_ string: String) -> String {
        var out: [UInt8] = []
        appendQuoted(string, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func appendQuoted(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Nearly every value (hex ids, states, names) needs no escape: copied whole.
        let copied = string.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            guard !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return false }
            out.append(contentsOf: utf8)
            return true
        }
        if copied == true {
            out.append(UInt8(ascii: "\""))
            return
        }
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
