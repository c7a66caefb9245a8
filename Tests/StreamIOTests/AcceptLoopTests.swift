import StreamIO
import SystemPackage
import Testing

@Suite struct AcceptLoopTests {
    /// A descriptor shortage in the middle of a flood: the loop reports it, pauses longer after
    /// each error in a row (10, 20, 40 ms), takes the connections that come after, starts its
    /// pauses over after one, retries interruptions and aborted connections at once, and ends
    /// only when the listener does. Before issue 35 the first error ended it.
    @Test func errorsPauseTheLoopAndNeverEndIt() {
        var script: [AcceptOutcome<Int>] = [
            .accepted(1), .failed(.tooManyOpenFiles), .failed(.tooManyOpenFiles), .failed(.tooManyOpenFilesInSystem),
            .accepted(2), .failed(.interrupted), .failed(.connectionAbort), .failed(.noBufferSpace), .accepted(3), .stopped,
            .accepted(4),
        ]
        var pauses: [Duration] = []
        var reports: [(Errno, Int)] = []
        var taken: [Int] = []
        AcceptLoop.run(
            next: { script.removeFirst() }, pause: { pauses.append($0) }, report: { error, inARow, _ in reports.append((error, inARow)) },
            accepted: { taken.append($0) })
        #expect(taken == [1, 2, 3])
        #expect(pauses == [.milliseconds(10), .milliseconds(20), .milliseconds(40), .milliseconds(10)])
        #expect(reports.map(\.0) == [.tooManyOpenFiles, .tooManyOpenFiles, .tooManyOpenFilesInSystem, .noBufferSpace])
        #expect(reports.map(\.1) == [1, 2, 3, 1])
        #expect(script.count == 1)  // nothing taken after the listener stopped
    }

    /// An error that never goes away pauses the loop at most a second at a time.
    @Test func thePauseStopsGrowingAtOneSecond() {
        var left = 20
        var pauses: [Duration] = []
        AcceptLoop.run(
            next: { () -> AcceptOutcome<Int> in
                left -= 1
                return left < 0 ? .stopped : .failed(.badFileDescriptor)
            }, pause: { pauses.append($0) }, report: { _, _, _ in }, accepted: { _ in })
        #expect(pauses.count == 20)
        #expect(pauses.max() == .seconds(1))
        #expect(pauses.suffix(13).allSatisfy { $0 == .seconds(1) })
    }
}
