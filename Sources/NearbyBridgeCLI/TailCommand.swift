import ArgumentParser
import Events
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

            Ends on SIGINT or SIGTERM (status 0), or when stdout fails, e.g. its reader went away \
            (status 3, as `run`).
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
        let output = StandardOutput()
        // What ends the command: a signal (nil) or stdout's first failure. The subscriber's
        // thread only reports a failure here; the command stops the subscriber and returns.
        let (end, ending) = AsyncStream.makeStream(of: (any Error)?.self, bufferingPolicy: .bufferingOldest(1))
        let subscriber: MQTTSubscriber
        do {
            subscriber = try MQTTSubscriber(
                settings: settings, group: group,
                onLine: { line in
                    do { try output.write(line: line + "\n") } catch { ending.yield(error) }
                },
                onNotice: { FileHandle.standardError.write(Data("nearby-bridge tail: \($0)\n".utf8)) })
        } catch {
            throw ValidationError("--mqtt: \(error)")
        }
        let signals = Task {
            for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm) {
                ending.yield(nil)
                return
            }
        }
        try subscriber.start()
        let failure = await end.first { _ in true } ?? nil
        signals.cancel()
        subscriber.stop()
        if let failure {
            FileHandle.standardError.write(Data("nearby-bridge tail: stdout failed: \(failure); stopping\n".utf8))
            throw ExitCode(ExitStatus.outputFailed)
        }
    }
}
