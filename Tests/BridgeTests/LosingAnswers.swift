import Bridge
import Events
import PeerProtocol
import StreamIO
import Synchronization
import UCI
import UCIHost
@testable import Simulation

/// A board connection on which the board's answers to one command go missing, the first
/// `count` times (a USB transfer or a proxy losing them).
final class LosingAnswers: UCITransport {
    private let inner: StreamConnection
    private let state: Mutex<(decoder: UCIStreamDecoder, left: Int)>
    private let lost: (groupID: UInt8, opcodeID: UInt8)
    var description: String { inner.description }

    init(_ inner: StreamConnection, groupID: UInt8, opcodeID: UInt8, count: Int) {
        self.inner = inner
        lost = (groupID, opcodeID)
        state = Mutex((UCIStreamDecoder(), count))
    }

    func write(_ bytes: [UInt8]) async throws { try await inner.write(bytes) }
    func close() { inner.close() }

    func read() async throws -> [UInt8]? {
        while true {
            guard let chunk = try await inner.read() else { return nil }
            let kept = state.withLock { s -> [UInt8] in
                s.decoder.append(chunk)
                var kept: [UInt8] = []
                while true {
                    guard let message = try? s.decoder.next() else {
                        if s.decoder.pendingByteCount == 0 { break }
                        continue
                    }
                    if message.messageType == .response, (message.groupID, message.opcodeID) == lost, s.left > 0 {
                        s.left -= 1
                        continue
                    }
                    kept += message.encoded()
                }
                return kept
            }
            if !kept.isEmpty { return kept }
        }
    }
}
