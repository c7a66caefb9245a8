import ArgumentParser
import Bridge
import Capture
import Events
import Foundation
import Logging
import Proximity
import WebView

@main
struct NearbyBridge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nearby-bridge",
        abstract: "Turn a UWB board and a Bluetooth LE adapter into a nearby-interaction sensor.",
        discussion: """
            Proximity events (device, peer.found, near, far, bump, peer.lost, and range with \
            --ranges) go to stdout as JSON Lines, one event per line; logs go to stderr.

            Try it without hardware:   nearby-bridge demo
            Range against a world:     nearby-bridge world   (then, in another shell)
                                       nearby-bridge run --uwb tcp:127.0.0.1:7000 --ble world:127.0.0.1:7100/field-rig

            \(ExitStatus.help)
            """,
        version: nearbyBridgeVersion,
        subcommands: [
            Demo.self, Run.self, CalibrateCommand.self, WorldCommand.self, WatchCommand.self, TailCommand.self, Devices.self, DoctorCommand.self,
            PlotCommand.self, ReplayCommand.self, KeygenCommand.self,
        ])

    /// ArgumentParser's, except for a value found wrong while the command runs (in a config file,
    /// a profile, a combination of options): that is one line on stderr and exit status 64,
    /// without a usage hint (which would name the root command, not the one that ran).
    static func main() async {
        let command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exit(withError: error)
        }
        do {
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                var command = command
                try command.run()
            }
        } catch let error as ValidationError {
            FileHandle.standardError.write(Data("Error: \(error.message)\n".utf8))
            exit(withError: ExitCode.validationFailure)
        } catch {
            exit(withError: error)
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
