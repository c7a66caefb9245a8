import ArgumentParser
import Foundation
import PeerSecurity

/// `nearby-bridge keygen`: a new event key for the rigs of one event (docs/PROTOCOL.md, "Security").
struct KeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Make a new event key: the secret every rig of one event shares.",
        discussion: """
            Rigs that hold the same key find each other through private adverts, prove membership \
            in an encrypted handshake and derive their ranging keys from it; rigs without it cannot \
            range with them or read their cards. Copy the file to every rig of the event and name it \
            in the config: "groupKeyFile": "/etc/nearby-bridge/event.key". The key is printed only \
            when no --output is given; its fingerprint (what rigs log and put in their device event) \
            goes to stderr.

              nearby-bridge keygen --output /etc/nearby-bridge/event.key
            """)

    @Option(name: .shortAndLong, help: "Write the key to this file (created with mode 0600; an existing file is not replaced).")
    var output: String?

    func run() throws {
        let key = GroupKey.generate()
        guard let output else {
            print(key.text)
            FileHandle.standardError.write(Data("fingerprint \(key.fingerprint)\n".utf8))
            return
        }
        let fd = open(output, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else {
            let why = errno == EEXIST ? "it exists (a key in use is never overwritten; remove it first)" : String(cString: strerror(errno))
            throw ValidationError("cannot create \(output): \(why)")
        }
        let line = Array((key.text + "\n").utf8)
        let written = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == line.count else { throw ValidationError("could not write \(output)") }
        FileHandle.standardError.write(Data("wrote \(output) (fingerprint \(key.fingerprint))\n".utf8))
    }
}
