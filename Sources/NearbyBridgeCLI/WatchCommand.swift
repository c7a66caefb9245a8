import ArgumentParser
import Foundation
import Glibc
import MQTTOutput
import StreamIO
import Synchronization
import Watch

/// Set by SIGINT/SIGTERM: `watch` restores the terminal and ends.
private let stopRequested = Atomic<Bool>(false)

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
            and fields are ignored.

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
        let screen = !plain && isatty(1) == 1
        let live = LiveInput()
        let take: @Sendable (String) -> Void = { line in
            if screen { live.apply(line) } else if let text = LiveView.plainLine(line) { Self.write(text + "\n") }
        }
        let sources: [String?] = mqtt != nil && files.isEmpty ? [] : files.isEmpty || files == ["-"] ? [nil] : files.map(Optional.some)
        for path in sources {
            let follow = path != nil
            IOThread.detach(name: "watch-input") {
                Self.readLines(path: path, follow: follow, take)
                live.ended()
            }
        }
        let subscriber = try mqtt.map { url in
            do {
                return try MQTTSubscriber(
                    settings: MQTTSettings(url: url), group: group, onLine: take,
                    onNotice: { notice in if !screen { Self.write("watch: \(notice)\n", to: 2) } })
            } catch {
                throw ValidationError("--mqtt: \(error)")
            }
        }
        try subscriber?.start()
        defer { subscriber?.stop() }
        installStopHandlers()
        if screen {
            try Terminal.withFullScreen { terminal in
                while !stopRequested.load(ordering: .relaxed), !terminal.quitPressed() {
                    let (width, height) = terminal.size()
                    let frame = live.screen(width: width, height: height, highlight: Int64(highlight * 1000))
                    terminal.draw(frame)
                    usleep(100_000)
                }
            }
        } else {
            while !stopRequested.load(ordering: .relaxed), mqtt != nil || !live.allEnded(of: sources.count) { usleep(50_000) }
        }
    }

    private func installStopHandlers() {
        for signal in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { _ in stopRequested.store(true, ordering: .relaxed) }
            sigaction(signal, &action, nil)
        }
    }

    /// Calls `take` with each line of stdin (`path` nil) or of the file at `path`; with
    /// `follow`, waits for more at the end of the file and starts over if it was truncated.
    private static func readLines(path: String?, follow: Bool, _ take: (String) -> Void) {
        let fd = path.map { open($0, O_RDONLY | O_CLOEXEC) } ?? 0
        guard fd >= 0 else {
            write("watch: cannot read \(path ?? "stdin"): \(String(cString: strerror(errno)))\n", to: 2)
            return
        }
        defer { if path != nil { close(fd) } }
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !stopRequested.load(ordering: .relaxed) {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 {
                guard follow, count == 0 else { return }
                var info = stat()
                if fstat(fd, &info) == 0, info.st_size < lseek(fd, 0, SEEK_CUR) {
                    lseek(fd, 0, SEEK_SET)  // truncated (log rotation): start over
                    pending = []
                }
                usleep(200_000)
                continue
            }
            pending += buffer[0..<count]
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                take(String(decoding: pending[..<newline], as: UTF8.self))
                pending.removeSubrange(...newline)
            }
        }
    }

    private static func write(_ text: String, to fd: Int32 = 1) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
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

    func ended() { state.withLock { $0.ended += 1 } }
    func allEnded(of count: Int) -> Bool { state.withLock { $0.ended >= count } }

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
    private let tty: Int32
    private var saved = termios()

    static func withFullScreen(_ body: (Terminal) throws -> Void) throws {
        let tty = open("/dev/tty", O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        var terminal = Terminal(tty: tty)
        if tty >= 0, tcgetattr(tty, &terminal.saved) == 0 {
            var raw = terminal.saved
            raw.c_lflag &= ~tcflag_t(ICANON | ECHO)  // Ctrl-C still signals (ISIG): the whole pipeline stops
            tcsetattr(tty, TCSANOW, &raw)
        }
        terminal.emit("\u{1B}[?1049h\u{1B}[?25l")
        defer {
            terminal.emit("\u{1B}[?25h\u{1B}[?1049l")
            if tty >= 0 {
                var saved = terminal.saved
                tcsetattr(tty, TCSANOW, &saved)
                close(tty)
            }
        }
        try body(terminal)
    }

    private init(tty: Int32) { self.tty = tty }

    func quitPressed() -> Bool {
        guard tty >= 0 else { return false }
        var byte: UInt8 = 0
        while read(tty, &byte, 1) == 1 {
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
    func draw(_ lines: [String]) {
        emit("\u{1B}[H" + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\r\n") + "\u{1B}[J")
    }

    private func emit(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(1, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}
