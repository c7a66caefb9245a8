import Logging
import Synchronization
import StreamIO
import Testing
import UCI
@testable import UCIHost

/// The device end of an in-memory pipe, driven step by step by each test.
struct ScriptedDevice {
    let transport: MemoryTransport
    var decoder = UCIStreamDecoder()

    /// The next whole command the host sent, as wire bytes.
    mutating func nextCommand() async throws -> [UInt8] {
        while true {
            if let message = try decoder.next() { return message.encoded() }
            guard let chunk = try await transport.read() else { throw TransportError.closed }
            decoder.append(chunk)
        }
    }

    func send(_ bytes: [UInt8]) async throws { try await transport.write(bytes) }
}

/// A host on a scripted device. Its command deadline is one no slow machine reaches unless a test
/// about timeouts asks for a short one: a deadline passing while a loaded CI (or TSan) delays the
/// scripted answer would resend the command and fail a test that is not about time (CI of
/// 2026-11-27: three such tests failed together after 15 s without a turn on a loaded machine).
func makeHost(timeout: Duration = .seconds(600), attempts: Int = 3) async -> (UCIHost, ScriptedDevice, Recorder) {
    let (hostEnd, deviceEnd) = MemoryTransport.pair()
    let recorder = Recorder()
    let host = UCIHost(transport: hostEnd, commandTimeout: timeout, commandAttempts: attempts, logger: Logger(label: "test")) {
        recorder.record($0)
    }
    await host.start()
    return (host, ScriptedDevice(transport: deviceEnd), recorder)
}
