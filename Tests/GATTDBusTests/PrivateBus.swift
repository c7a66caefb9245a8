import Foundation

/// A dbus-daemon of the test's own (Debian's `dbus` package), on a socket in a temporary
/// directory, with a policy that lets anyone own names, call anything and monitor: the bus the
/// application under test joins, and busctl and dbus-monitor (independent clients) talk on.
final class PrivateBus {
    let address: String
    private let daemon: Process
    private let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("nb-dbus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let socket = directory.appendingPathComponent("bus").path
        let configuration = directory.appendingPathComponent("bus.conf")
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(socket)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """.write(to: configuration, atomically: true, encoding: .utf8)
        address = "unix:path=\(socket)"
        daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        daemon.arguments = ["--config-file=\(configuration.path)", "--nofork", "--nopidfile", "--print-address=1"]
        daemon.standardError = FileHandle.nullDevice
        let printed = Pipe()
        daemon.standardOutput = printed
        try daemon.run()
        // The daemon prints its address once it accepts connections (the socket file appears
        // earlier, at bind, and a connection then is refused). End of file: it did not start.
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let more = printed.fileHandleForReading.availableData
            guard !more.isEmpty else { throw PrivateBusError.notListening(socket) }
            line.append(more)
        }
    }

    deinit {
        stopDaemon()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Ends the bus daemon: every connection to it breaks. SIGKILL: the daemon inherits the test
    /// thread's signal mask, where SIGTERM may be blocked.
    func stopDaemon() {
        guard daemon.isRunning else { return }
        kill(daemon.processIdentifier, SIGKILL)
        daemon.waitUntilExit()
    }

    /// `busctl --address=… --json=short ARGUMENTS`: its exit status, standard output parsed as
    /// JSON when it is, and standard error.
    func busctl(_ arguments: [String]) throws -> (status: Int32, json: Any?, error: String) {
        let run = try Self.run("/usr/bin/busctl", ["--address=\(address)", "--json=short"] + arguments)
        return (run.status, try? JSONSerialization.jsonObject(with: run.output), run.error)
    }

    /// Starts `dbus-monitor --address=… MATCH` (the reference implementation's own client),
    /// collecting what it prints.
    func monitor(_ match: String) throws -> Background {
        try Background("/usr/bin/dbus-monitor", ["--address", address, match])
    }

    /// Starts bluetoothd's GattManager1 stand-in (gatt_manager_standin.py, GLib's GDBus) on this
    /// bus; it prints "ready" once it owns org.bluez.
    func gattManagerStandIn() throws -> Background {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("gatt_manager_standin.py").path
        return try Background("/usr/bin/python3", [script, address])
    }

    /// `gdbus call --address=… ARGUMENTS` (GLib's client, which names a D-Bus error in its
    /// message): exit status, standard output, standard error.
    func gdbus(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        let run = try Self.run("/usr/bin/gdbus", ["call", "--address", address] + arguments)
        return (run.status, String(decoding: run.output, as: UTF8.self), run.error)
    }

    /// Runs a client to its end (their outputs here are a few lines, far below a pipe's buffer).
    private static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: Data, error: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, out, String(decoding: err, as: UTF8.self))
    }

    /// A client running beside the test, its standard output collected as it comes.
    final class Background: @unchecked Sendable {
        // @unchecked: `printed` is only touched under `lock`.
        private let process = Process()
        private let output = Pipe()
        private let lock = NSLock()
        private var printed = ""

        init(_ executable: String, _ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            output.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                guard let self, !data.isEmpty else { return }
                self.lock.withLock { self.printed += String(decoding: data, as: UTF8.self) }
            }
            try process.run()
        }

        deinit {
            output.fileHandleForReading.readabilityHandler = nil
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }

        /// What it has printed so far.
        var text: String { lock.withLock { printed } }

        /// Waits (up to 10 s) until it has printed a line that satisfies `match`.
        func line(where match: (String) -> Bool) -> String? {
            for _ in 0..<1000 {
                if let line = text.split(separator: "\n").map(String.init).first(where: match) { return line }
                usleep(10_000)
            }
            return nil
        }
    }
}

enum PrivateBusError: Error {
    case notListening(String)
}
