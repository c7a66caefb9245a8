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
