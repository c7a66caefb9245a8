import Logging
import StreamIO
import Testing
import UCI

@testable import UCIHost

/// A transport that fails the way it is told to: writes throw `writeError`, reads `readError`
/// (or wait forever without one).
private final class FailingTransport: UCITransport {
    let writeError: any Error
    let readError: (any Error)?
    var description: String { "failing" }

    init(write: any Error, read: (any Error)? = nil) {
        writeError = write
        readError = read
    }

    func write(_ bytes: [UInt8]) async throws { throw writeError }

    func read() async throws -> [UInt8]? {
        if let readError { throw readError }
        try await Task.sleep(for: .seconds(3600))
        return nil
    }

    func close() {}
}

/// An error type the host knows nothing about, and that is not Equatable.
private struct BoardOnFire: Error, CustomStringConvertible {
    var degrees: Int
    var description: String { "the board is at \(degrees) °C" }
}

@Suite struct TransportFailureTests {
    @Test func aWriteErrorReachesTheCallerWhole() async throws {
        let cause = TransportError.system(call: "send", errno: 32, message: "Broken pipe")
        let host = UCIHost(transport: FailingTransport(write: cause), logger: Logger(label: "test")) { _ in }
        await host.start()
        await #expect(throws: UCIHostError.transport(TransportFailure(cause))) { try await host.reset() }
        do {
            try await host.reset()
            Issue.record("reset succeeded on a failing transport")
        } catch {
            #expect(error.underlying as? TransportError == cause)
            #expect(error != .transport(TransportFailure(TransportError.closed)))
            #expect(error.description == "UWB transport failed: send failed: Broken pipe (errno 32)")
        }
    }

    @Test func aReadErrorClosesTheHostWithItsCause() async throws {
        let cause = TransportError.openDevice(path: "/dev/ttyACM0", errno: 13)
        let recorder = Recorder()
        let host = UCIHost(transport: FailingTransport(write: TransportError.closed, read: cause), logger: Logger(label: "test")) {
            recorder.record($0)
        }
        await host.start()
        await recorder.waitFor(count: 1)
        #expect(recorder.all == [.closed(.transport(TransportFailure(cause)))])
    }

    @Test func failuresCompareByTypeThenValue() {
        #expect(TransportFailure(TransportError.closed) == TransportFailure(TransportError.closed))
        #expect(TransportFailure(TransportError.closed) != TransportFailure(TransportError.invalidEndpoint("x")))
        #expect(TransportFailure(TransportError.closed) != TransportFailure(UCIHostError.closed))
        // Not Equatable: equal when they print the same.
        #expect(TransportFailure(BoardOnFire(degrees: 90)) == TransportFailure(BoardOnFire(degrees: 90)))
        #expect(TransportFailure(BoardOnFire(degrees: 90)) != TransportFailure(BoardOnFire(degrees: 91)))
        // Never boxed twice.
        #expect(TransportFailure(TransportFailure(TransportError.closed)).error is TransportError)
    }
}
