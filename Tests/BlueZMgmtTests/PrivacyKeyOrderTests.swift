import BlueZMgmt
import ByteCoding
import Foundation
import PeerProtocol
import PeerSecurity
import Testing

private let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Python with Bumble: $NEARBY_BRIDGE_PYTHON, or the .venv that `scripts/bootstrap --python`
/// creates (scripts/test sets the variable to it).
private let python: String? = ProcessInfo.processInfo.environment["NEARBY_BRIDGE_PYTHON"]
    ?? [packageRoot.appendingPathComponent(".venv/bin/python3").path].first { FileManager.default.isExecutableFile(atPath: $0) }

/// The identity resolving key a keyed rig hands its kernel (Set Privacy) must make the addresses
/// its peers resolve with the key as they derive it. Linux keeps keys least significant octet
/// first (smp.c's `smp_e` reverses them for AES), as Bumble's `crypto.ah` takes them: Bumble's
/// hash from the octets we send must be the hash we compute from the specification's order.
@Suite struct PrivacyKeyOrderTests {
    @Test(.enabled(if: python != nil, "needs Python with bumble: scripts/bootstrap --python"))
    func theKernelsAddressesResolveWithTheDerivedKey() throws {
        let key = try GroupKey(bytes: Array(0x20..<0x40))
        for peer: UInt64 in [0x0102_0304_0506_0708, 0xFFEE_DDCC_BBAA_9988] {
            let irk = KeySchedule.identityResolvingKey(key, peer: PeerID(peer))
            let sent = Array(MgmtCommand.setPrivacy(mode: 1, identityResolvingKey: irk).parameters.dropFirst())
            for prand: UInt32 in [0x4A_1B2C, 0x40_0001, 0x7F_FFFE] {
                let address = ResolvablePrivateAddress.address(irk: irk, prand: prand)
                // ah(k, r) with k and r least significant octet first, as on the air.
                let hash = try bumble(
                    "import sys; from bumble.crypto import ah; print(ah(bytes.fromhex(sys.argv[1]), bytes.fromhex(sys.argv[2])).hex())",
                    sent.hexString, Array(address.bytes[3..<6]).hexString)
                #expect(hash == Array(address.bytes[0..<3]).hexString, "peer \(String(peer, radix: 16)), prand \(String(prand, radix: 16))")
            }
        }
    }

    private func bumble(_ program: String, _ arguments: String...) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python!)
        process.arguments = ["-c", program] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
