import ArgumentParser
import Replay
import ServiceLifecycle

struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Re-run a capture through the codecs, filters and proximity, and write its events again.",
        discussion: """
            DIR is a --capture directory. Every captured node is rebuilt with its recorded \
            identity and seed; its recorded UCI responses answer its commands, and its recorded \
            notifications and Bluetooth events are fed back in recorded order, with clock ticks on \
            the recorded step. Events carry the recorded timestamps, so a replay of a demo or \
            world capture equals the original events.jsonl; a rig's capture (ticks every 200 ms \
            of wall time) may differ in when timeouts fire. Use the same --ranges as the capture.

            \(ExitStatus.help)
            """)

    @OptionGroup var common: CommonOptions

    @Argument(help: "A capture directory.", completion: .directory)
    var directory: String

    func run() async throws {
        // A replay holds no radios: SIGINT and SIGTERM end it as usual.
        let context = try common.bootstrap(handlesSignals: false)
        try await context.run {
            ReplayService(driver: try ReplayDriver(directory: directory, events: context.events, logger: context.logger))
        }
    }
}
