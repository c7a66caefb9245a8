import Foundation

/// Renders an event stream (JSON Lines, with `range` events) as an SVG a person can read at a
/// glance: one panel per observer -> peer pair, raw readings as dots, the filtered distance as a
/// line, the near/far thresholds, the time spent near shaded, bumps marked and labelled.
package struct DistancePlot {
    package struct Options: Sendable {
        package var nearMetres = 1.0
        package var farMetres = 1.5
        /// Each panel's axis reaches its largest filtered distance, within these bounds; raw
        /// readings above the top are clipped to it and drawn red.
        package var minAxisMetres = 2.0
        package var maxAxisMetres = 20.0
        package var maxPanels = 12
        package init() {}
    }

    struct Sample {
        var t: Double
        var raw: Double?
        var filtered: Double?
    }

    struct Panel {
        var node: String
        var peer: String
        var samples: [Sample] = []
        var zoneChanges: [(t: Double, near: Bool)] = []
        var bumps: [(t: Double, card: String)] = []
    }

    package enum Failure: Error, CustomStringConvertible {
        case noRanges(lines: Int)
        case notJSON(line: Int)
        package var description: String {
            switch self {
            case .noRanges(let lines):
                "no range events among \(lines) lines; record them with --ranges (or use a capture directory's events.jsonl)"
            case .notJSON(let line): "line \(line) is not a JSON object"
            }
        }
    }

    private var panels: [String: Panel] = [:]
    private var order: [String] = []
    private var names: [String: String] = [:]
    private var start: Double?
    private var end: Double = 0

    /// Reads JSON Lines; lines of other event types feed names, zones and bumps.
    package init(jsonLines text: String) throws {
        var lines = 0
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: true).enumerated() {
            lines += 1
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw Failure.notJSON(line: number + 1)
            }
            add(object)
        }
        guard panels.values.contains(where: { !$0.samples.isEmpty }) else { throw Failure.noRanges(lines: lines) }
    }

    private mutating func add(_ event: [String: Any]) {
        guard let type = event["type"] as? String, let ts = event["ts"] as? String, let t = Self.seconds(ts) else { return }
        if start == nil { start = t }
        let time = t - start!
        end = max(end, time)
        let node = event["node"] as? String ?? "?"
        if type == "peer.found" || type == "peer.named", let peer = event["peer"] as? String, let name = event["name"] as? String, !name.isEmpty {
            names[peer] = name
        }
        guard let peer = event["peer"] as? String, ["range", "near", "far", "bump"].contains(type) else { return }
        let key = node + ">" + peer
        if panels[key] == nil {
            panels[key] = Panel(node: node, peer: peer)
            order.append(key)
        }
        switch type {
        case "range":
            panels[key]!.samples.append(Sample(t: time, raw: event["distance"] as? Double, filtered: event["filtered"] as? Double))
        case "near", "far":
            panels[key]!.zoneChanges.append((time, type == "near"))
        default:
            let card = (event["card"] as? [String: Any])?["name"] as? String ?? "card"
            panels[key]!.bumps.append((time, card))
        }
    }

    /// Milliseconds-precision ISO-8601 UTC ("2026-11-21T18:00:00.123Z") to seconds.
    static func seconds(_ iso: String) -> Double? {
        let parts = iso.split(whereSeparator: { "-T:.Z".contains($0) }).compactMap { Int($0) }
        guard parts.count == 7 else { return nil }
        var components = DateComponents()
        (components.year, components.month, components.day) = (parts[0], parts[1], parts[2])
        (components.hour, components.minute, components.second) = (parts[3], parts[4], parts[5])
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let date = calendar.date(from: components) else { return nil }
        return date.timeIntervalSince1970 + Double(parts[6]) / 1000
    }

    // MARK: Rendering

    package func svg(options: Options = Options()) -> String {
        let shown = order.filter { !(panels[$0]!.samples.isEmpty) }.prefix(options.maxPanels)
        let width = 960.0, panelHeight = 220.0, left = 64.0, right = 24.0, top = 56.0, gap = 56.0
        let plotWidth = width - left - right
        let height = top + Double(shown.count) * (panelHeight + gap) + 8
        let duration = max(end, 1)
        var svg = SVG(width: width, height: height)
        svg.text(x: left, y: 24, "Distance over time per peer", size: 18, weight: "bold")
        legend(&svg, x: left, y: 42)

        for (i, key) in shown.enumerated() {
            let panel = panels[key]!
            let y0 = top + Double(i) * (panelHeight + gap) + 14
            let largest = panel.samples.compactMap(\.filtered).max() ?? options.minAxisMetres
            let axisMetres = min(max(options.minAxisMetres, (largest * 1.1).rounded(.up)), options.maxAxisMetres)
            func x(_ t: Double) -> Double { left + t / duration * plotWidth }
            func y(_ d: Double) -> Double { y0 + panelHeight - min(max(d, 0), axisMetres) / axisMetres * panelHeight }
            svg.text(x: left, y: y0 - 6, "\(label(panel.node)) → \(label(panel.peer))", size: 13, weight: "bold")
            // Time spent near, shaded.
            var nearSince: Double?
            for change in panel.zoneChanges {
                if change.near { nearSince = change.t } else if let since = nearSince {
                    svg.rect(x: x(since), y: y0, width: x(change.t) - x(since), height: panelHeight, fill: "#e6f4ea")
                    nearSince = nil
                }
            }
            if let since = nearSince { svg.rect(x: x(since), y: y0, width: x(duration) - x(since), height: panelHeight, fill: "#e6f4ea") }
            axes(&svg, left: left, y0: y0, width: plotWidth, height: panelHeight, duration: duration, maxMetres: axisMetres)
            svg.line(x1: left, y1: y(options.nearMetres), x2: left + plotWidth, y2: y(options.nearMetres), stroke: "#188038", dash: "6 4")
            svg.line(x1: left, y1: y(options.farMetres), x2: left + plotWidth, y2: y(options.farMetres), stroke: "#e37400", dash: "6 4")
            for sample in panel.samples {
                if let raw = sample.raw { svg.circle(cx: x(sample.t), cy: y(raw), r: 1.6, fill: raw > axisMetres ? "#d93025" : "#9aa0a6") }
            }
            svg.polyline(panel.samples.compactMap { s in s.filtered.map { (x(s.t), y($0)) } }, stroke: "#1a73e8", width: 2)
            for bump in panel.bumps {
                svg.line(x1: x(bump.t), y1: y0, x2: x(bump.t), y2: y0 + panelHeight, stroke: "#d93025", width: 2)
                svg.text(x: x(bump.t) + 4, y: y0 + 14, "bump: \(bump.card)", size: 12, fill: "#d93025")
            }
        }
        return svg.finish()
    }

    private func label(_ id: String) -> String {
        names[id].map { "\($0) (\(id.prefix(6)))" } ?? String(id.prefix(6))
    }

    private func legend(_ svg: inout SVG, x: Double, y: Double) {
        svg.circle(cx: x + 4, cy: y - 4, r: 3, fill: "#9aa0a6")
        svg.text(x: x + 12, y: y, "raw reading", size: 12)
        svg.line(x1: x + 100, y1: y - 4, x2: x + 124, y2: y - 4, stroke: "#1a73e8", width: 2)
        svg.text(x: x + 130, y: y, "filtered", size: 12)
        svg.line(x1: x + 200, y1: y - 4, x2: x + 224, y2: y - 4, stroke: "#188038", dash: "6 4")
        svg.text(x: x + 230, y: y, "near threshold", size: 12)
        svg.line(x1: x + 340, y1: y - 4, x2: x + 364, y2: y - 4, stroke: "#e37400", dash: "6 4")
        svg.text(x: x + 370, y: y, "far threshold", size: 12)
        svg.rect(x: x + 470, y: y - 12, width: 20, height: 12, fill: "#e6f4ea")
        svg.text(x: x + 496, y: y, "near", size: 12)
        svg.line(x1: x + 540, y1: y - 12, x2: x + 540, y2: y, stroke: "#d93025", width: 2)
        svg.text(x: x + 546, y: y, "bump", size: 12)
    }

    private func axes(_ svg: inout SVG, left: Double, y0: Double, width: Double, height: Double, duration: Double, maxMetres: Double) {
        svg.line(x1: left, y1: y0 + height, x2: left + width, y2: y0 + height, stroke: "#3c4043")
        svg.line(x1: left, y1: y0, x2: left, y2: y0 + height, stroke: "#3c4043")
        let step = Self.niceStep(duration / 8)
        var t = 0.0
        while t <= duration + 1e-9 {
            let x = left + t / duration * width
            svg.line(x1: x, y1: y0 + height, x2: x, y2: y0 + height + 4, stroke: "#3c4043")
            svg.text(x: x - 8, y: y0 + height + 16, Self.format(t) + "s", size: 11)
            t += step
        }
        let metresStep = Self.niceStep(maxMetres / 5)
        var d = 0.0
        while d <= maxMetres + 1e-9 {
            let y = y0 + height - d / maxMetres * height
            svg.line(x1: left - 4, y1: y, x2: left + width, y2: y, stroke: "#e8eaed")
            svg.text(x: left - 40, y: y + 4, Self.format(d) + " m", size: 11)
            d += metresStep
        }
    }

    static func niceStep(_ raw: Double) -> Double {
        let magnitude = pow(10, floor(log10(max(raw, 1e-9))))
        return [1, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? 10 * magnitude
    }

    static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }
}
