import ArgumentParser
import Foundation
import MQTTOutput
import UnixSignals

/// Prints the events every rig of a group publishes to a broker, merged, as JSON Lines.
struct TailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Print the events of every rig publishing to an MQTT broker, as JSON Lines on stdout.",
        discussion: """
            Subscribes to <prefix>/<group>/+/+ (QoS 1) on the broker that rigs run with --mqtt and \
            writes each event line once: a line the broker repeats (QoS 1 is at least once) is \
            recognised by its node and seq. Reconnects when the broker goes away. Pipe it into \
            `nearby-bridge watch` for the live view of all rigs:
              nearby-bridge tail --mqtt mqtt://broker.local | nearby-bridge watch
            """)

    @Option(help: "The broker: mqtt://[USER:PASSWORD@]HOST[:PORT] or mqtts://HOST[:PORT].")
    var mqtt: String

    @Option(help: "Only this group's rigs (default: every group).")
    var group: UInt16?

    @Option(help: "Topic prefix the rigs publish under (default: nearby).")
    var topicPrefix: String?

    @Option(help: "CA certificates (PEM) for mqtts://.", completion: .file())
    var caFile: String?

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        var settings = MQTTSettings(url: mqtt)
        settings.topicPrefix = topicPrefix
        settings.caFile = caFile
        let subscriber: MQTTSubscriber
        do {
            subscriber = try MQTTSubscriber(
                settings: settings, group: group,
                onLine: { line in
                    guard StandardOutputLines.write(line) else { Foundation.exit(0) }  // the reader went away
                },
                onNotice: { FileHandle.standardError.write(Data("nearby-bridge tail: \($0)\n".utf8)) })
        } catch {
            throw ValidationError("--mqtt: \(error)")
        }
        try subscriber.start()
        for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm) { break }
        subscriber.stop()
    }
}

/// Whole lines onto stdout, one write each (a line never interleaves with another).
enum StandardOutputLines {
    static func write(_ line: String) -> Bool {
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(1, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }
}
