import Glibc
import Synchronization
import SystemPackage

/// The process's one writer of stdout (file descriptor 1, or another one in tests): the event
/// lines of `run`, `demo`, `world` and `replay` (through `JSONLinesSink`), `tail`'s lines,
/// `watch`'s plain lines and screen frames, `calibrate`'s summary. A full pipe blocks the writer
/// rather than dropping or truncating a line; writes go out one at a time, so lines written
/// from several threads never interleave, even those too long for one `write(2)`. A failed write
/// (a closed pipe, a full disk) throws `OutputError`: every command then stops and exits with
/// status 3 (`JSONLinesSink` reports it once through its failure handler).
package struct StandardOutput: EventOutput {
    /// Held for each write: one caller at a time on stdout, whichever thread it is on.
    private static let serial = Mutex(())

    private let fd: FileDescriptor
    /// A regular file or a device such as /dev/null, which `poll` always reports writable: no
    /// need to ask before each line.
    private let neverFull: Bool

    package init(fileDescriptor: Int32 = 1) {
        fd = FileDescriptor(rawValue: fileDescriptor)
        var status = stat()
        let kind = fstat(fileDescriptor, &status) == 0 ? status.st_mode & S_IFMT : 0
        neverFull = kind == S_IFREG || (kind == S_IFCHR && isatty(fileDescriptor) == 0)
    }

    package func write(line: String) throws {
        try write(lines: [line])
    }

    /// Writes all lines with one system call where the output takes them whole.
    package func write(lines: [String]) throws {
        if lines.count == 1 { return try write(text: lines[0]) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(lines.reduce(0) { $0 + $1.utf8.count })
        for line in lines { bytes.append(contentsOf: line.utf8) }
        try bytes.withUnsafeBytes { try writeWhole($0) }
    }

    /// Writes the lines with one system call where the output takes them whole.
    package func write(utf8 bytes: UnsafeRawBufferPointer, lineEnds: [Int]) throws {
        try writeWhole(bytes)
    }

    /// Writes `text` as it is, whole: for output that is not lines (`watch`'s screen frames).
    package func write(text: String) throws {
        var text = text
        try text.withUTF8 { try writeWhole(UnsafeRawBufferPointer($0)) }
    }

    /// A loop of `write`s rather than swift-system's `writeAll`, which is generic over the bytes'
    /// sequence and ran unspecialised here (3 % of the node loop's CPU per range notification).
    private func writeWhole(_ bytes: UnsafeRawBufferPointer) throws {
        do {
            try Self.serial.withLock { _ in
                var rest = bytes
                while !rest.isEmpty {
                    rest = UnsafeRawBufferPointer(rebasing: rest[try fd.write(rest)...])
                }
            }
        } catch let error as Errno {
            throw OutputError(errno: error.rawValue)
        }
    }

    /// A pipe with room for `PIPE_BUF` bytes, a socket with room, a regular file, /dev/null.
    package func isWritableWithoutWaiting() -> Bool {
        if neverFull { return true }
        var request = pollfd(fd: fd.rawValue, events: Int16(POLLOUT), revents: 0)
        return poll(&request, 1, 0) == 1 && request.revents & Int16(POLLOUT) != 0
    }

    /// Ends a line left cut short in the file the events go to (a power cut while the previous
    /// run appended to `/var/log/nearby-bridge/events.jsonl`): without the newline this adds, the
    /// first event of this run would be glued to the torn one and both would be lost to every
    /// reader. True when it added one. Only for a regular file, read through `/proc/self/fd`
    /// since the descriptor itself is usually write-only (O_APPEND).
    package static func endTornLine(fileDescriptor: Int32 = 1) -> Bool {
        var status = stat()
        guard fstat(fileDescriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size > 0 else { return false }
        let reader = open("/proc/self/fd/\(fileDescriptor)", O_RDONLY | O_CLOEXEC)
        guard reader >= 0 else { return false }
        defer { close(reader) }
        var last: UInt8 = 0
        guard pread(reader, &last, 1, status.st_size - 1) == 1, last != UInt8(ascii: "\n") else { return false }
        var newline = UInt8(ascii: "\n")
        return Glibc.write(fileDescriptor, &newline, 1) == 1
    }

    /// Throws when file descriptor 1 was not open when the process started (`>&-`). A
    /// descriptor the runtime opened since (close-on-exec, unlike anything inherited as stdout)
    /// counts as closed: writing events into it would corrupt it.
    package static func checkOpen() throws {
        let flags = fcntl(1, F_GETFD)
        if flags < 0 || flags & FD_CLOEXEC != 0 { throw OutputError(errno: EBADF) }
    }
}
