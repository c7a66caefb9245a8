import Bridge
import Events
import Glibc
import PeerProtocol
import SystemPackage
import UCI

/// Inputs the benchmarks feed: what a UWBS sends, byte for byte.
enum Fixtures {
    /// The UWB short address of benchmark peer `index`.
    static func address(ofPeer index: Int) -> UInt16 { UInt16(0x1000 + index) }
    /// The session handle the scripted UWBS gives benchmark peer `index`'s session.
    static func handle(ofPeer index: Int) -> UInt32 { UInt32(0x1_0000 + index) }

    /// One SESSION_INFO_NTF (two-way ranging, one measurement) for `peer`'s session, round
    /// `round`, at a distance that wanders between 2.00 and 2.06 m (well clear of near and far).
    static func notification(peer: Int, round: UInt32) -> [UInt8] {
        let measurement = TwoWayMeasurement(
            address: .short(address(ofPeer: peer)), status: .ok, lineOfSight: .lineOfSight,
            distanceCentimetres: UInt16(200 + round % 7))
        let data = RangeData(
            sequenceNumber: round, session: handle(ofPeer: peer), rcrIndicator: 0, rangingIntervalMilliseconds: 100,
            measurementType: .twoWay, macAddressMode: .short, measurements: [measurement], vendorData: [])
        return UCINotification.rangeData(data).message.encoded()
    }

    /// Ranging rounds of `peers` peers, round-robin as a radio reports them: `rounds` each.
    static func notificationStream(peers: Int, rounds: Int) -> [[UInt8]] {
        (0..<rounds).flatMap { round in (0..<peers).map { notification(peer: $0, round: UInt32(round + 1)) } }
    }

    /// A peer's advert (payload v1 and a name), as the scanner reports it.
    static func advert(peer: PeerID, uwbAddress: UInt16) -> [UInt8] {
        let name = Array("peer".utf8)
        return Advertisement(group: 1, peerID: peer, uwbShortAddress: uwbAddress, capabilities: [.uwb], psm: 0x85).advertisingData()
            + [UInt8(name.count + 1), 0x09] + name
    }

    static func residentBytes() -> Int {
        let fd = open("/proc/self/statm", O_RDONLY)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = read(fd, &buffer, buffer.count)
        let fields = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self).split(separator: " ")
        return (fields.count > 1 ? Int(fields[1]) ?? 0 : 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// User plus system CPU time of the process so far.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

/// Writes lines to /dev/null through the CLI's own stdout output (real `write` calls: stdout's
/// cost without a terminal), then hands each line's bytes to an observer. The buffered stream's
/// render buffer reaches it as it reaches stdout in `run` (`write(utf8:lineEnds:)`): before
/// 2026-11-29 this output took only `String`s, so every line the node wrote cost the benchmark a
/// `String` the CLI never makes.
final class NullOutput: EventOutput {
    private let output: StandardOutput
    private let observe: @Sendable (UnsafeRawBufferPointer) -> Void

    init(observe: @escaping @Sendable (UnsafeRawBufferPointer) -> Void) {
        output = StandardOutput(fileDescriptor: open("/dev/null", O_WRONLY | O_CLOEXEC))
        self.observe = observe
    }

    func write(line: String) throws {
        try write(lines: [line])
    }

    func write(lines: [String]) throws {
        try output.write(lines: lines)
        for var line in lines { line.withUTF8 { observe(UnsafeRawBufferPointer($0)) } }
    }

    func write(utf8 bytes: UnsafeRawBufferPointer, lineEnds: [Int]) throws {
        try output.write(utf8: bytes, lineEnds: lineEnds)
        var start = 0
        for end in lineEnds {
            observe(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
            start = end
        }
    }

    /// `NODE_WRITER_THREAD=1` makes every line go through the stream's writer thread, as before
    /// the stream learnt to write on the emitting thread (for comparing the two in one build).
    func isWritableWithoutWaiting() -> Bool { !Self.writerThreadOnly && output.isWritableWithoutWaiting() }

    private static let writerThreadOnly = getenv("NODE_WRITER_THREAD") != nil
}

/// Latencies in microseconds, summarised.
struct Latencies {
    var samples: [Int] = []

    func percentile(_ p: Double) -> Int {
        guard !samples.isEmpty else { return 0 }
        let sorted = samples.sorted()
        return sorted[min(sorted.count - 1, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1)]
    }
}
