import Foundation
import MQTTOutput
import Testing

@testable import Bridge
@testable import NearbyBridgeCLI
@testable import Simulation

/// Issue 34, item 5: a key nothing reads is an error naming it, where it is and what was meant.
@Suite struct KnownKeysTests {
    static let shape = KnownKeys.object([
        "groupKeyFile": .open, "card": .open,
        "mqtt": .object(["url": .open, "clientId": .open]),
        "calibration": .map(.object(["offset": .open, "date": .open])),
        "nodes": .array(.object(["name": .open, "boardOffset": .open])),
    ])

    static func unknown(_ json: String) throws -> [String] {
        Self.shape.unknownKeys(in: try JSONSerialization.jsonObject(with: Data(json.utf8))).map(\.description)
    }

    @Test func aMisspeltKeyIsNamedWithItsPathAndTheKeyMeant() throws {
        #expect(try Self.unknown(#"{"groupKeyFlie": "k.key"}"#) == [#"unknown key "groupKeyFlie" (did you mean "groupKeyFile"?)"#])
        #expect(try Self.unknown(#"{"mqtt": {"url": "mqtt://h", "clientID": "x"}}"#) == [#"unknown key "mqtt.clientID" (did you mean "clientId"?)"#])
        #expect(try Self.unknown(#"{"calibration": {"0123456789AB": {"ofset": 0.1}}}"#)
            == [#"unknown key "calibration.0123456789AB.ofset" (did you mean "offset"?)"#])
        #expect(try Self.unknown(#"{"nodes": [{"name": "a"}, {"name": "b", "boardOfset": 0.1}]}"#)
            == [#"unknown key "nodes.1.boardOfset" (did you mean "boardOffset"?)"#])
        #expect(try Self.unknown(#"{"colour": "red"}"#) == [#"unknown key "colour""#])
    }

    @Test func whatTheShapeLeavesOpenAndWhatIsKnownPass() throws {
        #expect(try Self.unknown(#"{"groupKeyFile": "k", "card": {"anything": {"at": "all"}}, "nodes": []}"#).isEmpty)
        #expect(KnownKeys.editDistance("groupKeyFlie", "groupKeyFile") == 2)
        #expect(KnownKeys.editDistance("", "abc") == 3)
    }

    /// Every stored property of a settings or scenario type is a key the check knows: a setting
    /// added without its key would be refused in every file that uses it.
    @Test func everySettingIsAKnownKey() {
        func names(_ keys: [any CodingKey]) -> Set<String> { Set(keys.map(\.stringValue)) }
        func properties(_ value: Any, renamed: [String: String] = [:]) -> Set<String> {
            Set(Mirror(reflecting: value).children.compactMap(\.label).map { renamed[$0] ?? $0 })
        }
        #expect(properties(RunConfig()) == names(RunConfig.CodingKeys.allCases))
        #expect(properties(RunConfig.BoardCalibrationEntry(offset: 0)) == names(RunConfig.BoardCalibrationEntry.CodingKeys.allCases))
        #expect(properties(MQTTSettings(url: ""), renamed: ["clientID": "clientId"]) == names(MQTTSettings.CodingKeys.allCases))
        #expect(properties(Scenario(name: "", duration: 1, nodes: [])) == names(Scenario.CodingKeys.allCases))
        #expect(properties(Scenario.Node(name: "", path: [])) == names(Scenario.Node.CodingKeys.allCases))
        #expect(properties(RadioModel()) == names(RadioModel.CodingKeys.allCases))
        #expect(properties(Attack(kind: .garbage, rate: 1)) == names(Attack.CodingKeys.allCases))
    }

    @Test func aSettingsFileWithAMisspeltKeyIsRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("known-keys-\(getpid()).json").path
        try Data(#"{"uwb": "usb", "groupKeyFlie": "/etc/nearby-bridge/event.key"}"#.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect {
            _ = try RunConfig.load(path)
        } throws: { error in
            "\(error)".contains(#"unknown key "groupKeyFlie" (did you mean "groupKeyFile"?)"#)
        }
    }

    @Test func aScenarioWithAMisspeltKeyIsRefused() {
        let json = #"{"name": "s", "duration": 1, "radio": {"multipathSigmma": 0}, "nodes": [{"name": "a", "path": [[0, 0, 0]]}]}"#
        #expect {
            _ = try Scenario.decode(Data(json.utf8))
        } throws: { error in
            "\(error)".contains(#"unknown key "radio.multipathSigmma" (did you mean "multipathSigma"?)"#)
        }
    }
}
