import Foundation
import Testing

@testable import MQTTOutput

/// The spool keeps unacknowledged events across a restart, in order, bounded, and starts over
/// once the broker has them all.
@Suite struct EventSpoolTests {
    func directory() -> String {
        let path = NSTemporaryDirectory() + "nb-spool-\(UInt64.random(in: 0...UInt64.max))"
        return path
    }

    @Test func whatTheBrokerDidNotAcknowledgeSurvivesARestart() throws {
        let path = directory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var seqs: [UInt64] = []
        do {
            let spool = try EventSpool(directory: path, limitBytes: 1 << 20)
            for index in 0..<5 {
                seqs.append(spool.takeSeq())
                #expect(try spool.append(topic: "nearby/1/n/bump", line: "line \(index)"))
            }
            let sent = spool.nextToSend(limit: 3)
            #expect(sent.map(\.line) == ["line 0", "line 1", "line 2"])
            spool.acknowledge(upTo: sent[1].end, records: 2)
        }
        let reopened = try EventSpool(directory: path, limitBytes: 1 << 20)
        #expect(reopened.pendingCount == 3)
        #expect(reopened.nextToSend(limit: 10).map(\.line) == ["line 2", "line 3", "line 4"])
        // seq runs on past everything the first run could have stamped.
        #expect(reopened.takeSeq() > seqs.max()!)
    }

    @Test func aLostConnectionSendsTheUnacknowledgedAgainAndAFullAcknowledgementEmptiesTheFile() throws {
        let path = directory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let spool = try EventSpool(directory: path, limitBytes: 1 << 20)
        for index in 0..<3 { _ = try spool.append(topic: "t", line: "\(index)") }
        let first = spool.nextToSend(limit: 3)
        spool.rewind()
        #expect(spool.nextToSend(limit: 3) == first)
        spool.acknowledge(upTo: first.last!.end, records: 3)
        #expect(spool.pendingCount == 0)
        let size = try FileManager.default.attributesOfItem(atPath: path + "/spool.log")[.size] as? Int
        #expect(size == 0)
    }

    @Test func aFullSpoolRefusesWhatDoesNotFit() throws {
        let path = directory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let spool = try EventSpool(directory: path, limitBytes: 40)
        #expect(try spool.append(topic: "t", line: String(repeating: "x", count: 20)))
        #expect(try !spool.append(topic: "t", line: String(repeating: "y", count: 20)))
        #expect(spool.pendingCount == 1)
    }

    /// A crash in the middle of an append leaves a partial record: it is dropped, the whole ones
    /// before it stay, and the damage is reported.
    @Test func aRecordCutShortIsDroppedAndReported() throws {
        let path = directory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let spool = try EventSpool(directory: path, limitBytes: 1 << 20)
            _ = try spool.append(topic: "t", line: "whole")
            _ = try spool.append(topic: "t", line: "cut short")
        }
        let handle = try #require(FileHandle(forUpdatingAtPath: path + "/spool.log"))
        try handle.truncate(atOffset: try handle.seekToEnd() - 3)
        try handle.close()
        let reopened = try EventSpool(directory: path, limitBytes: 1 << 20)
        #expect(reopened.nextToSend(limit: 10).map(\.line) == ["whole"])
        #expect(reopened.damage != nil)
    }

    @Test func subscribersTellRepeatsByNodeAndSeq() {
        var seen = SeenEvents()
        let answers = [
            #"{"v":1,"seq":7,"ts":"x","type":"bump","node":"ab"}"#, #"{"v":1,"seq":7,"ts":"x","type":"bump","node":"ab"}"#,
            #"{"v":1,"seq":7,"ts":"x","type":"bump","node":"cd"}"#, #"{"v":1,"seq":8,"ts":"x","type":"bump","node":"ab"}"#,
        ].map { seen.isNew($0) }
        #expect(answers == [true, false, true, true])
    }

    @Test func urlsAreTakenApartOrRefusedWithTheFormsTheyTake() throws {
        let plain = try MQTTSettings(url: "mqtt://broker.local").endpoint()
        #expect(plain.host == "broker.local" && plain.port == 1883 && !plain.tls && plain.username == nil)
        let full = try MQTTSettings(url: "mqtts://rig:s3cret@10.0.0.2:8884").endpoint()
        #expect(full.tls && full.host == "10.0.0.2" && full.port == 8884 && full.username == "rig" && full.password == "s3cret")
        for bad in ["http://x", "mqtt://", "mqtt://host:99999", "mqtt://host:1/x"] {
            #expect(throws: MQTTError.self) { try MQTTSettings(url: bad).endpoint() }
        }
    }
}
