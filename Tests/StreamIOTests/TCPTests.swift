import StreamIO
import Synchronization
import Testing

@Suite struct TCPTransportTests {
    @Test func bytesCrossALoopbackConnectionBothWays() async throws {
        let listener = try TCPListener(host: "127.0.0.1", port: 0)
        defer { listener.close() }
        let accepted = Mutex<StreamConnection?>(nil)
        listener.acceptLoop { connection in accepted.withLock { $0 = connection } }
        let client = try StreamConnection.connect(host: "127.0.0.1", port: listener.port)
        var server: StreamConnection?
        while server == nil {
            server = accepted.withLock { $0 }
            try await Task.sleep(for: .milliseconds(1))
        }
        try await client.write([0x20, 0x02, 0x00, 0x00])
        var received: [UInt8] = []
        while received.count < 4 { received += try await server!.read() ?? [] }
        #expect(received == [0x20, 0x02, 0x00, 0x00])
        try await server!.write([1, 2, 3])
        #expect(try await client.read() == [1, 2, 3])
        server!.close()
        #expect(try await client.read() == nil)
    }

    @Test func connectionRefusedIsAClearError() throws {
        let listener = try TCPListener(host: "127.0.0.1", port: 0)
        let port = listener.port
        listener.close()
        #expect(throws: TransportError.self) { try StreamConnection.connect(host: "127.0.0.1", port: port) }
    }
}

