import Foundation
import Glibc
import Synchronization
import Testing
@testable import Events

/// Issue 34, item 7: a power cut while a run appended to the event file leaves its last line cut
/// short; the next run starts on a line of its own, so its first event is not glued to the torn
/// one.
@Suite struct TornEventFileTests {
    func appendOnly(_ contents: String) throws -> (path: String, fd: Int32) {
        let path = NSTemporaryDirectory() + "nb-events-\(UInt64.random(in: 0...UInt64.max)).jsonl"
        try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        try #require(fd >= 0)
        return (path, fd)
    }

    @Test func aLineCutShortIsEndedAndTheNextEventsStartOnTheirOwnLine() throws {
        let (path, fd) = try appendOnly("{\"v\":1,\"seq\":1}\n{\"v\":1,\"se")
        defer { close(fd); unlink(path) }
        #expect(StandardOutput.endTornLine(fileDescriptor: fd))
        try StandardOutput(fileDescriptor: fd).write(line: "{\"v\":1,\"seq\":2}\n")
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines == ["{\"v\":1,\"seq\":1}", "{\"v\":1,\"se", "{\"v\":1,\"seq\":2}", ""])
    }

    @Test func wholeLinesAnEmptyFileAndAPipeAreLeftAlone() throws {
        for contents in ["{\"v\":1}\n", ""] {
            let (path, fd) = try appendOnly(contents)
            defer { close(fd); unlink(path) }
            #expect(!StandardOutput.endTornLine(fileDescriptor: fd))
            #expect(try String(contentsOfFile: path, encoding: .utf8) == contents)
        }
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        #expect(!StandardOutput.endTornLine(fileDescriptor: ends[1]))
    }
}
