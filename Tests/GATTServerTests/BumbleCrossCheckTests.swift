import Foundation
import Testing

@testable import GATTServer

/// The root of the package, for the Python scripts the tests run.
private let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Python with Bumble: $NEARBY_BRIDGE_PYTHON, or the .venv that `scripts/bootstrap --python`
/// creates (scripts/test sets the variable to it).
private let python: String? = ProcessInfo.processInfo.environment["NEARBY_BRIDGE_PYTHON"]
    ?? [packageRoot.appendingPathComponent(".venv/bin/python3").path].first { FileManager.default.isExecutableFile(atPath: $0) }

/// An independent client: Bumble's ATT codec (PyPI `bumble` 0.0.236, the VM rig's) builds every
/// request and decodes every answer while Tests/GATTServerTests/bumble_client.py runs GATT's
/// discovery, a CCCD write, writes to the NI characteristic and a notification against our
/// server (the script's docstring has its line protocol).
@Suite struct BumbleCrossCheckTests {
    @Test(.enabled(if: python != nil, "needs Python with bumble: scripts/bootstrap --python"))
    func bumblesClientRunsTheGATTProceduresAgainstOurServer() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python!)
        process.arguments = [packageRoot.appendingPathComponent("Tests/GATTServerTests/bumble_client.py").path]
        let toClient = Pipe()
        let fromClient = Pipe()
        let errors = Pipe()
        process.standardInput = toClient
        process.standardOutput = fromClient
        process.standardError = errors
        try process.run()

        var server = ATTServer(database: accessoryDatabase)
        var writes: [ATTServerAction] = []
        var lines = LineReader(fromClient.fileHandleForReading)
        var finished = false
        while let line = lines.next() {
            if line == "OK" {
                finished = true
                break
            }
            let words = line.split(separator: " ").map(String.init)
            var report = Report()
            switch words.first {
            case "PDU" where words.count == 2:
                let actions = server.handle(octets(words[1]))
                writes += actions.filter { if case .write = $0 { true } else { false } }
                report.add(actions)
            case "NOTIFY" where words.count == 3:
                do {
                    report.send.append(try server.notification(GATTUUID(words[1])!, value: octets(words[2])).hexString)
                } catch {
                    report.refused = "\(error)"
                }
            default:
                Issue.record("the client sent \(line)")
            }
            toClient.fileHandleForWriting.write(try JSONEncoder().encode(report) + Data("\n".utf8))
        }
        try? toClient.fileHandleForWriting.close()
        process.waitUntilExit()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(finished && process.terminationStatus == 0, "\(message)")
        // What the bridge would have received: Apple's initialize (0x0A) with a response, stop
        // (0x0C) without.
        #expect(
            writes == [
                .write(characteristic: AccessoryGATTService.qorvoRX, valueHandle: 5, value: [0x0A], withResponse: true),
                .write(characteristic: AccessoryGATTService.qorvoRX, valueHandle: 5, value: [0x0C], withResponse: false),
            ])
        #expect(server.configuration(of: AccessoryGATTService.qorvoTX) == .notifications)
        #expect(server.mtu == 185)
    }
}

/// One step's answer to the client (the script's docstring): JSON, so Python reads it with
/// the standard library.
private struct Report: Encodable {
    var send: [String] = []
    var writes: [[Field]] = []
    var subscriptions: [[Field]] = []
    var refused: String?

    enum Field: Encodable {
        case text(String), flag(Bool), number(Int)
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .text(let text): try container.encode(text)
            case .flag(let flag): try container.encode(flag)
            case .number(let number): try container.encode(number)
            }
        }
    }

    // Without this, JSONEncoder drops a nil `refused`; Python reads a missing key as an error.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(send, forKey: .send)
        try container.encode(writes, forKey: .writes)
        try container.encode(subscriptions, forKey: .subscriptions)
        try container.encode(refused, forKey: .refused)
    }

    enum CodingKeys: String, CodingKey { case send, writes, subscriptions, refused }

    mutating func add(_ actions: [ATTServerAction]) {
        for action in actions {
            switch action {
            case .send(let pdu): send.append(pdu.hexString)
            case .write(let uuid, _, let value, let withResponse): writes.append([.text("\(uuid)"), .text(value.hexString), .flag(withResponse)])
            case .subscription(let uuid, let configuration): subscriptions.append([.text("\(uuid)"), .number(Int(configuration.rawValue))])
            case .indicationConfirmed: break
            }
        }
    }
}

/// Lines from a pipe, read as they come (the client waits for each answer).
private struct LineReader {
    let handle: FileHandle
    var buffer: [UInt8] = []

    init(_ handle: FileHandle) { self.handle = handle }

    mutating func next() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeFirst(newline + 1)
                return line
            }
            let chunk = handle.availableData
            if chunk.isEmpty { return nil }
            buffer += chunk
        }
    }
}

extension Array where Element == UInt8 {
    fileprivate var hexString: String { map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }
}
