import Foundation
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

@testable import Plot

@Suite struct DistancePlotTests {
    let node = "0123456789abcdef"
    let peer = "fedcba9876543210"

    func line(_ ms: Int, _ type: String, _ fields: String = "") -> String {
        let ts = String(format: "2026-01-01T00:00:%02d.%03dZ", ms / 1000, ms % 1000)
        return #"{"v":1,"seq":1,"ts":"\#(ts)","type":"\#(type)","node":"\#(node)""# + fields + "}"
    }

    var stream: String {
        [
            line(0, "peer.found", #","peer":"\#(peer)","name":"Alice & <Bob>","rssi":-60"#),
            line(100, "range", #","peer":"\#(peer)","status":"OK","distance":2.0,"filtered":2.0,"nlos":false,"azimuth":null,"elevation":null"#),
            line(200, "range", #","peer":"\#(peer)","status":"OK","distance":0.8,"filtered":0.9,"nlos":false,"azimuth":null,"elevation":null"#),
            line(250, "near", #","peer":"\#(peer)","distance":0.9,"azimuth":null"#),
            line(300, "range", #","peer":"\#(peer)","status":"RX_TIMEOUT","distance":null,"filtered":0.9,"nlos":null,"azimuth":null,"elevation":null"#),
            line(400, "range", #","peer":"\#(peer)","status":"OK","distance":0.02,"filtered":0.05,"nlos":false,"azimuth":null,"elevation":null"#),
            line(450, "bump", #","peer":"\#(peer)","bump_id":1,"distance":0.05,"card":{"name":"Alice"}"#),
            line(9000, "far", #","peer":"\#(peer)","distance":1.6,"azimuth":null"#),
        ].joined(separator: "\n")
    }

    @Test func rendersWellFormedSVGWithEveryElement() throws {
        let svg = try DistancePlot(jsonLines: stream).svg()
        let document = try XMLDocument(xmlString: svg)
        let root = try #require(document.rootElement())
        #expect(root.name == "svg")
        let polylines = root.elements(forName: "polyline")
        #expect(polylines.count == 1)
        // Filtered values at four rounds; the failed round keeps its filtered value.
        let points = try #require(polylines.first.flatMap { attribute($0, "points") }).split(separator: " ")
        #expect(points.count == 4)
        // Raw dots only where a reading exists (3), plus the legend's dot.
        #expect(root.elements(forName: "circle").count == 4)
        let texts = root.elements(forName: "text").compactMap(\.stringValue)
        #expect(texts.contains("bump: Alice"))
        #expect(texts.contains("012345 → Alice & <Bob> (fedcba)"))
        #expect(texts.contains("0s") && texts.contains("8s"))  // 9 s of data: ticks every 2 s
        // The near zone from 0.25 s to 9 s is shaded.
        #expect(root.elements(forName: "rect").contains { attribute($0, "fill") == "#e6f4ea" && Double(attribute($0, "width") ?? "0")! > 700 })
    }

    /// FoundationXML on Linux does not find attributes by name in a namespaced document.
    func attribute(_ element: XMLElement, _ name: String) -> String? {
        element.attributes?.first { $0.name == name }?.stringValue
    }

    @Test func explainsWhatIsMissing() {
        #expect(throws: DistancePlot.Failure.self) { try DistancePlot(jsonLines: line(0, "device")) }
        do {
            _ = try DistancePlot(jsonLines: line(0, "device"))
        } catch {
            #expect("\(error)".contains("--ranges"))
        }
        #expect(throws: DistancePlot.Failure.self) { try DistancePlot(jsonLines: "not json") }
    }

    @Test func isoTimestamps() {
        #expect(DistancePlot.seconds("1970-01-01T00:00:01.500Z") == 1.5)
        #expect(DistancePlot.seconds("2026-11-21T18:00:00.000Z") == 1_795_284_000)
        #expect(DistancePlot.seconds("garbage") == nil)
    }
}
