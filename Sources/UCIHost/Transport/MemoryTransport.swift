import StreamIO

/// One end of an in-memory byte pipe. `pair()` gives a host end and a device end: bytes written to
/// one are read from the other. For tests and in-process devices.
package final class MemoryTransport: UCITransport {
    private let inbound: ByteQueue
    private let outbound: ByteQueue
    package let description: String

    private init(inbound: ByteQueue, outbound: ByteQueue, description: String) {
        self.inbound = inbound
        self.outbound = outbound
        self.description = description
    }

    package static func pair() -> (host: MemoryTransport, device: MemoryTransport) {
        let toHost = ByteQueue()
        let toDevice = ByteQueue()
        return (
            MemoryTransport(inbound: toHost, outbound: toDevice, description: "memory:host"),
            MemoryTransport(inbound: toDevice, outbound: toHost, description: "memory:device")
        )
    }

    package func write(_ bytes: [UInt8]) async throws {
        guard outbound.push(bytes) else { throw TransportError.closed }
    }

    package func read() async throws -> [UInt8]? { try await inbound.next() }

    package func close() {
        inbound.finish()
        outbound.finish()
    }
}
