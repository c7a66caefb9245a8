import ArgumentParser
import Dispatch
import Events
import Foundation
import Glibc
import MQTTOutput
import StreamIO
import Synchronization
import Watch

struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Show event streams live: each rig's radios, its peers, distances and bumps.",
        discussion: """
            Reads the JSON lines of `run`, `demo` or `world` from stdin, or from FILEs (followed as \
            they grow, like tail -f; one per rig, merged). On a terminal it draws a full-screen view \
            in place: per rig its radios, per peer the filtered distance with a bar (0-2 m), near \
            or far, band, how fast it changes (m/s, negative while coming closer), UWB or Bluetooth only, the last bump \
            (the latest marked *, a new one highlighted) and how long ago it was heard; q or Ctrl-C \
            quits and restores the terminal. When stdout is not a terminal it writes one plain line \
            per device, peer found, near, far, bump and lost event instead. Unknown event types \
            and fields are ignored. A failed stdout (its reader went away) ends it with status 3, \
            as `run`.

              nearby-bridge run --config rig.json | tee events.jsonl | nearby-bridge watch
              nearby-bridge watch /var/log/nearby-bridge/events.jsonl
              nearby-bridge watch --mqtt mqtt://broker.local        (every rig publishing there)
            """)

    @Argument(help: "Event files to follow (default: stdin).", completion: .file())
    var files: [String] = []

    @Option(help: "Seconds a new bump stays highlighted.")
    var highlight: Double = 5

    @Flag(help: "Plain lines even on a terminal.")
    var plain = false

    @Option(help: "Show the rigs that publish to this MQTT broker (`run --mqtt`): mqtt://[USER:PASSWORD@]HOST[:PORT] or mqtts://…; each event once, however often the broker repeats it.")
    var mqtt: String?

    @Option(help: "With --mqtt: only this group's rigs (default: every group).")
    var group: UInt16?

    func validate() throws {
        if files.isEmpty, mqtt == nil, isatty(0) == 1 {
            throw ValidationError("pipe events into watch or name files, e.g. nearby-bridge demo | nearby-bridge watch")
        }
        guard highlight >= 0, highlight.isFinite else { throw ValidationError("--highlight must be 0 or more seconds, e.g. --highlight 5") }
    }

    func run() throws {
        signal(SIGPIPE, SIG_IGN)  // a reader that went away is a failed write: status 3
        let screen = !plain && isatty(1) == 1
        let live = LiveInput()
        let output = StandardOutput()
        let stop = WatchStop()
        let take: @Sendable (String) -> Void = { line in
            if screen {
                live.apply(line)
            } else if let text = LiveView.plainLine(line) {
                do { try output.write(line: text + "\n") } catch { stop.fail(error) }
            }
        }
        let sources: [String?] = mqtt != nil && files.isEmpty ? [] : files.isEmpty || files == ["-"] ? [nil] : files.map(Optional.some)
        for path in sources {
            let follow = path != nil
            IOThread.detach(name: "watch-input") { [mqtt] in
                Self.readLines(path: path, follow: follow, stop: stop, take)
                // Plain lines end with the last input; the screen stays until q.
                if live.ended() == sources.count, !screen, mqtt == nil { stop.raise() }
            }
        }
        let subscriber = try mqtt.map { url in
            do {
                return try MQTTSubscriber(
                    settings: MQTTSettings(url: url), group: group, onLine: take,
                    onNotice: { notice in if !screen { FileHandle.standardError.write(Data("watch: \(notice)\n".utf8)) } })
            } catch {
                throw ValidationError("--mqtt: \(error)")
            }
        }
        try subscriber?.start()
        defer { subscriber?.stop() }
        let signals = stop.raisedBySignals()
        defer { withExtendedLifetime(signals) {} }
        if screen {
            do {
                try Terminal.withFullScreen(output: output) { terminal in
                    // Redrawn every 100 ms, new events or not: the ages on screen keep counting.
                    // That pace is the view's, so the wait for q or a stop has it as its timeout.
                    while !stop.wait(orReadable: terminal.keys, timeoutMilliseconds: 100), !terminal.quitPressed() {
                        let (width, height) = terminal.size()
                        try terminal.draw(live.screen(width: width, height: height, highlight: Int64(highlight * 1000)))
                    }
                }
            } catch let error as OutputError {
                stop.fail(error)
            }
        } else {
            _ = stop.wait(orReadable: -1, timeoutMilliseconds: -1)
        }
        if let failure = stop.failure {
            FileHandle.standardError.write(Data("watch: stdout failed: \(failure); stopping\n".utf8))
            throw ExitCode(ExitStatus.outputFailed)
        }
    }

    /// Calls `take` with each line of stdin (`path` nil) or of the file at `path` until the end
    /// or the stop; with `follow`, waits at the end of the file for it to change (inotify), and
    /// starts over if it was truncated.
    private static func readLines(path: String?, follow: Bool, stop: WatchStop, _ take: (String) -> Void) {
        let fd = path.map { open($0, O_RDONLY | O_CLOEXEC) } ?? 0
        guard fd >= 0 else {
            FileHandle.standardError.write(Data("watch: cannot read \(path ?? "stdin"): \(String(cString: strerror(errno)))\n".utf8))
            return
        }
        defer { if path != nil { close(fd) } }
        // Watched before the first read: a change after any read is queued, never missed.
        let changes = follow ? inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK)) : -1
        defer { if changes >= 0 { close(changes) } }
        if changes >= 0, let path, inotify_add_watch(changes, path, UInt32(IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE)) < 0 {
            FileHandle.standardError.write(Data("watch: cannot follow \(path): \(String(cString: strerror(errno)))\n".utf8))
            return
        }
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !stop.wait(orReadable: fd, timeoutMilliseconds: -1) {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 {
                guard follow, count == 0, changes >= 0 else { return }
                var info = stat()
                if fstat(fd, &info) == 0, info.st_size < lseek(fd, 0, SEEK_CUR) {
                    lseek(fd, 0, SEEK_SET)  // truncated (log rotation): start over
                    pending = []
                    continue
                }
                guard !stop.wait(orReadable: changes, timeoutMilliseconds: -1) else { return }
                while buffer.withUnsafeMutableBytes({ read(changes, $0.baseAddress, $0.count) }) > 0 {}  // seen
                continue
            }
            pending += buffer[0..<count]
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                take(String(decoding: pending[..<newline], as: UTF8.self))
                pending.removeSubrange(...newline)
            }
        }
    }
}

/// What ends `watch`: SIGINT/SIGTERM, the end of every input (plain lines), or a failed stdout.
/// A pipe that becomes readable once raised, so every wait (the inputs' reads, the screen's
/// wait for a key, the plain view's wait for the end) is one `poll` that includes it.
private final class WatchStop: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32
    private let firstFailure = Mutex<(any Error)?>(nil)

    init() {
        var ends: [Int32] = [-1, -1]
        precondition(pipe(&ends) == 0, "pipe: \(String(cString: strerror(errno)))")
        (readEnd, writeEnd) = (ends[0], ends[1])
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(writeEnd, F_SETFL, O_NONBLOCK)  // raised twice: never blocks on a full pipe
    }

    /// Never read: once written, the pipe stays readable for every waiter.
    func raise() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Stops because stdout failed; the first failure is the one reported.
    func fail(_ error: any Error) {
        firstFailure.withLock { if $0 == nil { $0 = error } }
        raise()
    }

    var failure: (any Error)? { firstFailure.withLock { $0 } }

    /// Waits until the stop (true), `fd` is readable (false; -1: none) or the timeout passes
    /// (false; -1: none).
    func wait(orReadable fd: Int32, timeoutMilliseconds: Int32) -> Bool {
        var fds = [pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0), pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        while poll(&fds, fd >= 0 ? 2 : 1, timeoutMilliseconds) < 0, errno == EINTR {}
        return fds[0].revents != 0
    }

    /// Raises the stop on SIGINT or SIGTERM (handled on a dispatch queue, not in the signal
    /// handler); keep the sources alive while watching.
    func raisedBySignals() -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in raise() }
            source.resume()
            return source
        }
    }
}

/// The view shared by the input threads and the drawing loop, with the stream clock: the newest
/// event's time plus the wall time since it came, so ages keep counting between events and a
/// file of old events reads in its own time.
private final class LiveInput: Sendable {
    private struct State {
        var view = LiveView()
        var arrival: Int64 = 0
        var ended = 0
    }
    private let state = Mutex(State())

    func apply(_ line: String) {
        state.withLock { s in
            let before = s.view.latest
            s.view.apply(line)
            if s.view.latest != before { s.arrival = Self.wallMilliseconds() }
        }
    }

    /// Counts an input that ended; returns how many have.
    func ended() -> Int {
        state.withLock { s in
            s.ended += 1
            return s.ended
        }
    }

    func screen(width: Int, height: Int, highlight: Int64) -> [String] {
        state.withLock { s in
            let now = (s.view.latest ?? 0) + (s.view.latest == nil ? 0 : Self.wallMilliseconds() - s.arrival)
            return s.view.screen(width: width, height: height, now: now, highlight: highlight, styled: true)
        }
    }

    private static func wallMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}

/// The controlling terminal in full-screen mode: the alternate screen, no cursor, keys read
/// from /dev/tty (stdin carries the events) without echo; everything restored on the way out.
private struct Terminal {
    /// Where keys come from (-1: no terminal to read them from).
    let keys: Int32
    private let output: StandardOutput
    private var saved = termios()

    static func withFullScreen(output: StandardOutput, _ body: (Terminal) throws -> Void) throws {
        let tty = open("/dev/tty", O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        var terminal = Terminal(keys: tty, output: output)
        if tty >= 0, tcgetattr(tty, &terminal.saved) == 0 {
            var raw = terminal.saved
            raw.c_lflag &= ~tcflag_t(ICANON | ECHO)  // Ctrl-C still signals (ISIG): the whole pipeline stops
            tcsetattr(tty, TCSANOW, &raw)
        }
        try output.write(text: "\u{1B}[?1049h\u{1B}[?25l")
        defer {
            try? output.write(text: "\u{1B}[?25h\u{1B}[?1049l")
            if tty >= 0 {
                var saved = terminal.saved
                tcsetattr(tty, TCSANOW, &saved)
                close(tty)
            }
        }
        try body(terminal)
    }

    private init(keys: Int32, output: StandardOutput) {
        self.keys = keys
        self.output = output
    }

    func quitPressed() -> Bool {
        guard keys >= 0 else { return false }
        var byte: UInt8 = 0
        while read(keys, &byte, 1) == 1 {
            if byte == UInt8(ascii: "q") || byte == UInt8(ascii: "Q") { return true }
        }
        return false
    }

    func size() -> (width: Int, height: Int) {
        var size = winsize()
        guard ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return (80, 24) }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    /// One write per frame, each line overwritten in place and cleared to its end: no flicker.
    func draw(_ lines: [String]) throws {
        try output.write(text: "\u{1B}[H" + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\r\n") + "\u{1B}[J")
    }
}
