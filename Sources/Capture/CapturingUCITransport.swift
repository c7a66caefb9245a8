import Synchronization
import UCI
import UCIHost

/// Passes every byte through unchanged and records each UCI packet, both directions, as one
/// pcap record (link type 299). Streams are re-framed per direction, because transports hand
/// over arbitrary chunks; bytes that do not frame are recorded as they came, so nothing is lost.
package final class CapturingUCITransport: UCITransport {
    private let inner: any UCITransport
    private let pcap: PcapWriter
    private let clock: @Sendable () -> Int64
    private let toDevice = Mutex(Framer())
    private let fromDevice = Mutex(Framer())

    package var description: String { inner.description }

    /// `clock` gives microseconds since the Unix epoch (virtual time in the simulation).
    package init(_ inner: any UCITransport, pcap: PcapWriter, clock: @escaping @Sendable () -> Int64) {
        self.inner = inner
        self.pcap = pcap
        self.clock = clock
    }

    package func write(_ bytes: [UInt8]) async throws {
        record(bytes, toDevice)
        try await inner.write(bytes)
    }

    package func read() async throws -> [UInt8]? {
        let chunk = try await inner.read()
        if let chunk { record(chunk, fromDevice) }
        return chunk
    }

    package func close() {
        inner.close()
    }

    private func record(_ bytes: [UInt8], _ framer: borrowing Mutex<Framer>) {
        let packets = framer.withLock { $0.push(bytes) }
        let now = clock()
        for packet in packets { pcap.write(packet, microseconds: now) }
    }

    /// Splits a byte stream into whole UCI packets; keeps at most one partial packet.
    struct Framer {
        private var buffer: [UInt8] = []

        mutating func push(_ bytes: [UInt8]) -> [[UInt8]] {
            buffer += bytes
            var packets: [[UInt8]] = []
            while !buffer.isEmpty {
                do {
                    guard let (_, consumed) = try UCIPacket.parse(buffer[...]) else { break }
                    packets.append(Array(buffer.prefix(consumed)))
                    buffer.removeFirst(consumed)
                } catch {
                    packets.append(buffer)  // unframeable: keep the raw bytes
                    buffer = []
                }
            }
            if buffer.count > 70_000 {  // longer than any packet can be
                packets.append(buffer)
                buffer = []
            }
            return packets
        }
    }
}
