import Synchronization
import Testing

@testable import StreamIO

@Suite struct IOThreadTests {
    /// Runs `body` on an IOThread named `name` and returns what it returned.
    static func onThread<T: Sendable>(named name: String, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            IOThread.detach(name: name) { continuation.resume(returning: body()) }
        }
    }

    @Test func theThreadCarriesItsName() async {
        #expect(await Self.onThread(named: "uci-reader") { IOThread.currentName() } == "uci-reader")
    }

    @Test func aLongNameIsCutToWhatLinuxKeeps() async {
        #expect(await Self.onThread(named: "a-name-longer-than-fifteen") { IOThread.currentName() } == "a-name-longer-t")
        // Cut at a character boundary, never inside one.
        #expect(IOThread.fitted("fourteen bytes→x") == "fourteen bytes")
        #expect(IOThread.fitted("short") == "short")
    }
}
