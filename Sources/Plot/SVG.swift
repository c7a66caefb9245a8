import Foundation

/// A tiny SVG writer; text is escaped.
struct SVG {
    private var body: [String] = []
    let width: Double
    let height: Double

    init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    private static func n(_ v: Double) -> String { String(format: "%.1f", v) }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    mutating func text(x: Double, y: Double, _ text: String, size: Int, weight: String = "normal", fill: String = "#202124") {
        body.append(
            "<text x=\"\(Self.n(x))\" y=\"\(Self.n(y))\" font-family=\"sans-serif\" font-size=\"\(size)\" font-weight=\"\(weight)\" fill=\"\(fill)\">\(Self.escape(text))</text>")
    }

    mutating func line(x1: Double, y1: Double, x2: Double, y2: Double, stroke: String, width: Double = 1, dash: String? = nil) {
        body.append(
            "<line x1=\"\(Self.n(x1))\" y1=\"\(Self.n(y1))\" x2=\"\(Self.n(x2))\" y2=\"\(Self.n(y2))\" stroke=\"\(stroke)\" stroke-width=\"\(width)\""
                + (dash.map { " stroke-dasharray=\"\($0)\"" } ?? "") + "/>")
    }

    mutating func rect(x: Double, y: Double, width: Double, height: Double, fill: String) {
        body.append("<rect x=\"\(Self.n(x))\" y=\"\(Self.n(y))\" width=\"\(Self.n(max(width, 0)))\" height=\"\(Self.n(height))\" fill=\"\(fill)\"/>")
    }

    mutating func circle(cx: Double, cy: Double, r: Double, fill: String) {
        body.append("<circle cx=\"\(Self.n(cx))\" cy=\"\(Self.n(cy))\" r=\"\(r)\" fill=\"\(fill)\"/>")
    }

    mutating func polyline(_ points: [(Double, Double)], stroke: String, width: Double) {
        guard points.count > 1 else { return }
        body.append(
            "<polyline fill=\"none\" stroke=\"\(stroke)\" stroke-width=\"\(width)\" points=\""
                + points.map { "\(Self.n($0.0)),\(Self.n($0.1))" }.joined(separator: " ") + "\"/>")
    }

    func finish() -> String {
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\">\n"
            + "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n" + body.joined(separator: "\n") + "\n</svg>\n"
    }
}
