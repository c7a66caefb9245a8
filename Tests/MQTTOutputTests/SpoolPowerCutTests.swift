import Foundation
import Testing
@testable import MQTTOutput

/// Issue 34, item 7: a power cut can leave `spool.log` cut at any byte. Reopened, the spool keeps
/// every record that was whole, drops the torn one with one report, and loses nothing else.
@Suite struct SpoolPowerCutTests {
    @Test func aLogCutAtEveryByteKeepsTheWholeRecordsAndReportsTheTornOne() throws {
        let source = NSTemporaryDirectory() + "nb-spool-cut-\(UInt64.random(in: 0...UInt64.max))"
        defer { try? FileManager.default.removeItem(atPath: source) }
        let lines = (0..<4).map { #"{"v":1,"seq":\#($0 + 1),"type":"bump","node":"ab"}"# }
        var ends: [Int] = []
        do {
            let spool = try EventSpool(directory: source, limitBytes: 1 << 20)
            for line in lines {
                _ = spool.takeSeq()
                #expect(try spool.append(topic: "nearby/1/ab/bump", line: line))
            }
            ends = spool.nextToSend(limit: 10).map(\.end)
        }
        let log = try Data(contentsOf: URL(fileURLWithPath: source + "/spool.log"))
        let state = try Data(contentsOf: URL(fileURLWithPath: source + "/spool.state"))
        #expect(ends.last == log.count)
        for cut in 0...log.count {
            let directory = source + "-\(cut)"
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try log.prefix(cut).write(to: URL(fileURLWithPath: directory + "/spool.log"))
            try state.write(to: URL(fileURLWithPath: directory + "/spool.state"))
            let spool = try EventSpool(directory: directory, limitBytes: 1 << 20)
            let whole = ends.filter { $0 <= cut }.count
            #expect(spool.nextToSend(limit: 10).map(\.line) == Array(lines.prefix(whole)), "cut at \(cut)")
            #expect((spool.damage != nil) == !([0] + ends).contains(cut), "cut at \(cut)")
            // What comes after goes on from the whole records, and keeps its place.
            #expect(try spool.append(topic: "t", line: "after"))
            spool.rewind()
            #expect(spool.nextToSend(limit: 10).map(\.line) == Array(lines.prefix(whole)) + ["after"], "cut at \(cut)")
            #expect(spool.takeSeq() > UInt64(lines.count), "cut at \(cut): a seq used before the cut came again")
        }
    }

    /// `spool.state` cut at any byte (a power cut before its data reached the card): the spool
    /// sends everything again rather than nothing, and never hands out a `seq` it used before.
    @Test func aStateCutAtEveryByteNeverReusesASeq() throws {
        let source = NSTemporaryDirectory() + "nb-state-cut-\(UInt64.random(in: 0...UInt64.max))"
        defer { try? FileManager.default.removeItem(atPath: source) }
        var used: UInt64 = 0
        do {
            let spool = try EventSpool(directory: source, limitBytes: 1 << 20)
            for index in 0..<1_500 {
                used = spool.takeSeq()
                _ = try spool.append(topic: "t", line: #"{"v":1,"seq":\#(used),"n":\#(index)}"#)
            }
            let first = spool.nextToSend(limit: 2)
            spool.acknowledge(upTo: first[1].end, records: 2)
        }
        let log = try Data(contentsOf: URL(fileURLWithPath: source + "/spool.log"))
        let state = try Data(contentsOf: URL(fileURLWithPath: source + "/spool.state"))
        let previous = try Data(contentsOf: URL(fileURLWithPath: source + "/spool.state.old"))
        for (cut, keepsPrevious) in (0..<state.count).flatMap({ [($0, false), ($0, true)] }) {
            let directory = source + "-\(cut)-\(keepsPrevious)"
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try log.write(to: URL(fileURLWithPath: directory + "/spool.log"))
            try state.prefix(cut).write(to: URL(fileURLWithPath: directory + "/spool.state"))
            if keepsPrevious { try previous.write(to: URL(fileURLWithPath: directory + "/spool.state.old")) }
            let spool = try EventSpool(directory: directory, limitBytes: 1 << 20)
            #expect(spool.pendingCount >= 1_498, "cut at \(cut)")
            #expect(spool.damage != nil, "cut at \(cut)")
            #expect(spool.takeSeq() > used, "cut at \(cut): a seq used before the cut came again")
        }
        // The whole state: exactly what was acknowledged stays acknowledged.
        let directory = source + "-whole"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try log.write(to: URL(fileURLWithPath: directory + "/spool.log"))
        try state.write(to: URL(fileURLWithPath: directory + "/spool.state"))
        let spool = try EventSpool(directory: directory, limitBytes: 1 << 20)
        #expect(spool.pendingCount == 1_498)
        #expect(spool.damage == nil)
    }
}
