import Glibc
import SystemPackage

/// The events an MQTT broker has not acknowledged yet, on disk, in order: they survive a broker
/// outage and a restart of the rig, and go out with their original `seq` and `ts` once the
/// broker is back.
///
/// Two files in the spool directory. `spool.log` holds records `topic length (u16 LE), topic,
/// line length (u32 LE), line` appended as events come. `spool.state` holds two decimal numbers:
/// the offset up to which the broker acknowledged every record, and the `seq` the MQTT
/// destination starts from after a restart (so that `node` + `seq` stays unique across
/// restarts: `seq` is reserved a thousand at a time, a restart skips what was left). Once every
/// record is acknowledged both files start over. A record past `limitBytes` is refused and
/// counted: the spool never grows without bound.
///
/// Not thread-safe: `MQTTSink` owns it behind its lock. A power cut may lose what the page cache
/// held (no fsync per event: a rig writes a few events a second for hours).
final class EventSpool {
    struct Record: Equatable {
        var topic: String
        var line: String
        /// Where the record ends in `spool.log`: acknowledging it acknowledges up to here.
        var end: Int
    }

    enum SpoolError: Error, CustomStringConvertible, Equatable {
        case cannotOpen(path: String, Errno)
        case cannotWrite(path: String, Errno)
        case corrupt(path: String, offset: Int)
        case lostState(path: String)

        var description: String {
            switch self {
            case .cannotOpen(let path, let errno): "cannot open the MQTT spool \(path): \(errno)"
            case .cannotWrite(let path, let errno): "cannot write the MQTT spool \(path): \(errno)"
            case .corrupt(let path, let offset): "the MQTT spool \(path) is damaged at byte \(offset); records from there on are dropped"
            case .lostState(let path):
                "the MQTT spool's state \(path) was lost (a power cut?): unacknowledged events may be sent again, seq goes on past every one used"
            }
        }
    }

    let directory: String
    let limitBytes: Int
    private let log: FileDescriptor
    /// Everything before this offset was acknowledged.
    private(set) var acknowledged = 0
    /// Everything before this offset was handed to the broker (acknowledged or in flight).
    private var sent = 0
    private(set) var size = 0
    private(set) var nextSeq: UInt64 = 1
    /// The `seq` a restart would start from: `nextSeq` stays below it.
    private var reservedSeq: UInt64 = 1
    static let seqReservation: UInt64 = 1000
    /// What `open` found wrong with the files it read, if anything.
    private(set) var damage: SpoolError?

    private var logPath: String { directory + "/spool.log" }
    private var statePath: String { directory + "/spool.state" }

    /// Opens (or creates) the spool in `directory`, keeping what a previous run left unsent.
    init(directory: String, limitBytes: Int) throws(SpoolError) {
        self.directory = directory
        self.limitBytes = limitBytes
        mkdir(directory, 0o700)
        let path = directory + "/spool.log"
        do {
            log = try FileDescriptor.open(
                FilePath(path), .readWrite, options: [.create, .closeOnExec], permissions: [.ownerReadWrite])
        } catch {
            throw .cannotOpen(path: path, error as? Errno ?? .ioError)
        }
        size = Int((try? log.seek(offset: 0, from: .end)) ?? 0)
        readState()
        // A record cut short by a crash mid-append: keep what is whole. Every whole record's
        // `seq` was used, acknowledged or not: none of them may come again.
        var offset = 0
        var highestSeq: UInt64 = 0
        while offset < size {
            guard let record = read(at: offset) else {
                damage = .corrupt(path: path, offset: offset)
                truncate(to: offset)
                break
            }
            highestSeq = max(highestSeq, Self.seq(of: record.line) ?? 0)
            if offset >= acknowledged { pendingCount += 1 }
            offset = record.end
        }
        // A state written after the last whole record could have been lost with it.
        acknowledged = min(acknowledged, size)
        sent = acknowledged
        if highestSeq >= nextSeq {
            nextSeq = highestSeq + 1
            reservedSeq = nextSeq
        }
    }

    deinit { try? log.close() }

    /// Records not yet acknowledged.
    private(set) var pendingCount = 0

    /// Appends one record and stamps the next `seq`; false when the spool is full (the caller says so).
    func append(topic: String, line: String) throws(SpoolError) -> Bool {
        let topicBytes = Array(topic.utf8), lineBytes = Array(line.utf8)
        let recordSize = 6 + topicBytes.count + lineBytes.count
        guard size + recordSize <= limitBytes else { return false }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(recordSize)
        bytes += [UInt8(topicBytes.count & 0xFF), UInt8(topicBytes.count >> 8)] + topicBytes
        bytes += (0..<4).map { UInt8(truncatingIfNeeded: lineBytes.count >> (8 * $0)) } + lineBytes
        do {
            _ = try log.writeAll(toAbsoluteOffset: Int64(size), bytes)
        } catch {
            throw .cannotWrite(path: logPath, error as? Errno ?? .ioError)
        }
        size += recordSize
        pendingCount += 1
        return true
    }

    /// Takes a `seq` for a line about to be written.
    func takeSeq() -> UInt64 {
        if nextSeq >= reservedSeq {
            reservedSeq = nextSeq + Self.seqReservation
            writeState()
        }
        defer { nextSeq += 1 }
        return nextSeq
    }

    /// Up to `limit` records not yet handed to the broker, marked as handed.
    func nextToSend(limit: Int) -> [Record] {
        var records: [Record] = []
        while records.count < limit, sent < size, let record = read(at: sent) {
            records.append(record)
            sent = record.end
        }
        return records
    }

    /// The broker acknowledged every record up to `end`, `records` more than before; when that
    /// is all of them, the spool starts over.
    func acknowledge(upTo end: Int, records: Int) {
        guard end > acknowledged else { return }
        acknowledged = min(end, size)
        pendingCount = max(0, pendingCount - records)
        if acknowledged == size {
            truncate(to: 0)
        }
        writeState()
    }

    /// The connection dropped: what was in flight goes out again (at least once, as QoS 1 says).
    func rewind() { sent = acknowledged }

    private func truncate(to offset: Int) {
        _ = ftruncate(log.rawValue, off_t(offset))
        size = offset
        if offset == 0 { acknowledged = 0 }
        sent = min(sent, offset)
        acknowledged = min(acknowledged, offset)
    }

    private func read(at offset: Int) -> Record? {
        guard let header = bytes(at: offset, count: 2) else { return nil }
        let topicLength = Int(header[0]) | Int(header[1]) << 8
        guard let topic = bytes(at: offset + 2, count: topicLength), let lengthBytes = bytes(at: offset + 2 + topicLength, count: 4)
        else { return nil }
        let lineLength = lengthBytes.enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
        let start = offset + 6 + topicLength
        guard lineLength <= limitBytes, start + lineLength <= size, let line = bytes(at: start, count: lineLength) else { return nil }
        return Record(topic: String(decoding: topic, as: UTF8.self), line: String(decoding: line, as: UTF8.self), end: start + lineLength)
    }

    private func bytes(at offset: Int, count: Int) -> [UInt8]? {
        guard offset + count <= size else { return nil }
        var buffer = [UInt8](repeating: 0, count: count)
        let read = buffer.withUnsafeMutableBytes { try? log.read(fromAbsoluteOffset: Int64(offset), into: $0) }
        return read == count ? buffer : nil
    }

    /// The state, or the one before it when a power cut took the newest (renamed in, but its
    /// data never reached the card): then what was acknowledged since goes out again (QoS 1
    /// allows repeats; subscribers drop them by `node` and `seq`), and `seq` skips one more
    /// reservation, the most the lost write can have taken. With neither, everything in the log
    /// goes out again and `seq` goes on from the highest one in it.
    private func readState() {
        let previous = Self.state(in: String(contentsOfFile: statePath + ".old"))
        if let current = Self.state(in: String(contentsOfFile: statePath)) {
            (acknowledged, nextSeq) = current
        } else if let previous {
            (acknowledged, nextSeq) = (previous.acknowledged, previous.reserved + Self.seqReservation)
            damage = .lostState(path: statePath)
        } else if access(statePath, F_OK) == 0 {
            damage = .lostState(path: statePath)
        }
        nextSeq = max(nextSeq, 1)
        reservedSeq = nextSeq
    }

    /// "ACKNOWLEDGED RESERVED\n": anything else (a file cut short, empty, garbage) is no state.
    private static func state(in text: String?) -> (acknowledged: Int, reserved: UInt64)? {
        guard let text, text.hasSuffix("\n") else { return nil }
        let numbers = text.dropLast().split(separator: " ", omittingEmptySubsequences: false).map { UInt64($0) }
        guard numbers.count == 2, let acknowledged = numbers[0], let reserved = numbers[1], acknowledged <= UInt64(Int.max) else { return nil }
        return (Int(acknowledged), reserved)
    }

    /// The `seq` of a line the bridge rendered (`{"v":1,"seq":N,…`), if it is one.
    private static func seq(of line: String) -> UInt64? {
        let prefix = #"{"v":1,"seq":"#
        guard line.hasPrefix(prefix) else { return nil }
        return UInt64(line.dropFirst(prefix.count).prefix { $0.isASCII && $0.isNumber })
    }

    /// Written to a temporary file and renamed in, the state it replaces kept as `.old`: a crash
    /// leaves the old state or the new one, and a power cut that loses the new one's data still
    /// leaves the one before.
    private func writeState() {
        let temporary = statePath + ".tmp"
        let text = "\(acknowledged) \(reservedSeq)\n"
        guard let fd = try? FileDescriptor.open(
            FilePath(temporary), .writeOnly, options: [.create, .truncate, .closeOnExec], permissions: [.ownerReadWrite])
        else { return }
        _ = try? fd.writeAll(Array(text.utf8))
        try? fd.close()
        rename(statePath, statePath + ".old")
        rename(temporary, statePath)
    }
}

extension String {
    /// The whole file as UTF-8, or nil.
    fileprivate init?(contentsOfFile path: String) {
        guard let fd = try? FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec]) else { return nil }
        defer { try? fd.close() }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while let count = chunk.withUnsafeMutableBytes({ try? fd.read(into: $0) }), count > 0 { bytes += chunk[..<count] }
        self.init(decoding: bytes, as: UTF8.self)
    }
}
