import ArgumentParser
import Doctor
import Foundation
import Logging

struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check that this machine can run a rig, and say exactly what to fix.",
        discussion: """
            One line per check (ok, info, warn, fail) with the fix for each problem: the UWB board \
            (present on USB, udev rules, group, permission, answers FiRa UCI) and Bluetooth \
            (kernel support, CAP_NET_ADMIN, rfkill, adapters powered, bluetoothd). With --config, \
            it also reads that settings file as run does (a key nothing reads, a wrong type or an \
            out-of-range value fails, naming it) and checks that each board has a calibrated offset \
            in it (a warning if not: run `nearby-bridge calibrate`). The exit status \
            is 1 if any check failed, else 0. The report goes to stdout (this command writes no \
            events); --json prints one JSON array instead.
            """)

    @Flag(help: "Print the findings as a JSON array of {check, status, detail, fix}.")
    var json = false

    @Option(help: "The rig's settings file (as for run): check that each board's offset is filed in it.")
    var config: String?

    func run() async throws {
        // The settings file first: `run` would refuse one that does not read (a misspelt key
        // included), and that is a failure to report beside the radios, not instead of them.
        var findings: [Finding] = []
        var calibration: CalibrationRecords?
        if let path = config {
            do {
                calibration = CalibrationRecords(path: path, boards: Set((try RunConfig.load(path).calibration ?? [:]).keys))
                findings.append(Finding("settings file", .ok, "\(path) reads as run reads it"))
            } catch let error as ValidationError {
                findings.append(Finding("settings file", .fail, error.message, fix: "correct \(path): run --config refuses it the same way"))
            }
        }
        var logger = Logger(label: "nearby-bridge")
        logger.logLevel = .critical
        findings += await Doctor.examine(logger: logger, calibration: calibration)
        if json {
            let objects = findings.map { finding -> [String: String] in
                var object = ["check": finding.check, "status": finding.status.rawValue, "detail": finding.detail]
                object["fix"] = finding.fix
                return object
            }
            let data = try JSONSerialization.data(withJSONObject: objects, options: [.sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
        } else {
            for finding in findings {
                print("\(finding.status.rawValue.padding(toLength: 5, withPad: " ", startingAt: 0)) \(finding.check): \(finding.detail)")
                if let fix = finding.fix { print("      fix: \(fix)") }
            }
        }
        if findings.contains(where: { $0.status == .fail }) { throw ExitCode(1) }
    }
}
