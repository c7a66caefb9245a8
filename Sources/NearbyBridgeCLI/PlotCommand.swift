import ArgumentParser
import Foundation
import Plot

struct PlotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plot",
        abstract: "Draw distance over time per peer from an event stream, as SVG (and PNG if a converter is installed).",
        discussion: """
            FILE is JSON Lines as nearby-bridge writes them, recorded with --ranges (for example \
            `nearby-bridge demo --speed 0 --ranges > events.jsonl`), or a capture directory \
            (its events.jsonl is used). One panel per observer → peer: raw readings as dots, the \
            filtered distance as a line, near/far thresholds, time spent near shaded, bumps marked.
            """)

    @Argument(help: "Event stream file, or a capture directory.", completion: .file())
    var file: String

    @Option(name: .shortAndLong, help: "Output SVG path (default: FILE's name with .svg).")
    var output: String?

    @Flag(help: "Also write a PNG beside the SVG (needs rsvg-convert or ImageMagick's convert).")
    var png = false

    @Option(help: "Near threshold drawn, metres.")
    var near: Double = 1.0

    @Option(help: "Far threshold drawn, metres.")
    var far: Double = 1.5

    func run() throws {
        var isDirectory: ObjCBool = false
        let input = FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) && isDirectory.boolValue
            ? (file as NSString).appendingPathComponent("events.jsonl") : file
        guard let text = try? String(contentsOfFile: input, encoding: .utf8) else {
            throw ValidationError("cannot read \(input)")
        }
        var options = DistancePlot.Options()
        options.nearMetres = near
        options.farMetres = far
        let svg = try DistancePlot(jsonLines: text).svg(options: options)
        let target = output ?? ((input as NSString).deletingPathExtension + ".svg")
        try svg.write(toFile: target, atomically: true, encoding: .utf8)
        FileHandle.standardError.write(Data("wrote \(target)\n".utf8))
        if png { try convert(target) }
    }

    private func convert(_ svg: String) throws {
        let pngPath = (svg as NSString).deletingPathExtension + ".png"
        for (tool, arguments) in [("rsvg-convert", ["-o", pngPath, svg]), ("convert", [svg, pngPath])] {
            guard let path = ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":")
                .map({ "\($0)/\(tool)" }).first(where: { FileManager.default.isExecutableFile(atPath: $0) })
            else { continue }
            let process = try Process.run(URL(fileURLWithPath: path), arguments: arguments)
            process.waitUntilExit()
            if process.terminationStatus == 0 {
                FileHandle.standardError.write(Data("wrote \(pngPath)\n".utf8))
                return
            }
        }
        throw ValidationError("no SVG converter worked; install librsvg2-bin (rsvg-convert) or imagemagick")
    }
}
