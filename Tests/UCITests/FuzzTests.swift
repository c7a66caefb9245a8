import Testing
import UCI

/// Seeded random and mutated-valid input: nothing may trap, decoded values must re-encode to
/// themselves, and the stream decoder must keep dropping garbage instead of holding on to it.
@Suite("Fuzz")
struct FuzzTests {
    /// Valid messages of every kind this module models, to mutate from.
    static let corpus: [UCIMessage] = {
        let measurement = TwoWayMeasurement(
            address: .short(0xDD5F), status: .ok, lineOfSight: .lineOfSight, distanceCentimetres: 120,
            azimuth: AngleMeasurement(degrees: -12.5, figureOfMerit: 80))
        let extended = TwoWayMeasurement(
            address: .extended(0x1122_3344_5566_7788), status: .rangingRxTimeout, lineOfSight: .unknown(0xFF),
            distanceCentimetres: 0)
        let commands: [UCICommand] = [
            .deviceReset, .getDeviceInfo, .getCapsInfo, .sessionInit(sessionID: 42, type: .fiRaRanging),
            .sessionDeinit(session: 42), .setAppConfig(session: 42, PublishedCommandTests.runFiraTwrConfig),
            .getAppConfig(session: 42, [.slotDuration, .channelNumber]),
            .updateControllerMulticastList(session: 1, action: .addWith16ByteSubSessionKey,
                [Controlee(shortAddress: 1, subSessionID: 2, subSessionKey: [UInt8](repeating: 7, count: 16))]),
            .sessionStart(session: 42), .sessionStop(session: 42),
        ]
        let responses: [UCIResponse] = [
            .deviceReset(.ok),
            .deviceInfo(.ok, DeviceInfo(
                uciVersion: UCIVersion(major: 2, minor: 0, maintenance: 0), macVersion: UCIVersion(major: 1, minor: 3, maintenance: 0),
                phyVersion: UCIVersion(major: 1, minor: 3, maintenance: 0), uciTestVersion: UCIVersion(major: 1, minor: 1, maintenance: 0),
                vendorData: [1, 2])),
            .capsInfo(.ok, [CapabilityTLV(type: 0x0E, value: [0xFF]), CapabilityTLV(type: 0xE4, value: [0x3C, 0])]),
            .sessionInit(.ok, sessionHandle: 0x1000), .sessionInit(.ok, sessionHandle: nil), .sessionDeinit(.ok),
            .setAppConfig(.invalidRange, [AppConfigStatus(id: .slotDuration, status: .invalidRange)]),
            .getAppConfig(.ok, [.channel(9), .slotDuration(rstu: 2400)]),
            .updateControllerMulticastList(.ok, [ControleeStatus(shortAddress: 3, status: 0)]),
            .sessionStart(.ok), .sessionStop(.ok), .statusOnly(groupID: 0xE, opcodeID: 1, .syntaxError),
        ]
        let notifications: [UCINotification] = [
            .deviceStatus(.ready), .genericError(.syntaxError),
            .sessionStatus(session: 42, state: .active, reason: .stateChangeWithSessionManagementCommands),
            .rangeData(RangeData(sequenceNumber: 1, session: 42, rangingIntervalMilliseconds: 120,
                                 measurements: [measurement, measurement], vendorData: [9])),
            .rangeData(RangeData(sequenceNumber: 2, session: 42, rangingIntervalMilliseconds: 120,
                                 macAddressMode: .extended, measurements: [extended])),
        ]
        return commands.map(\.message) + responses.map(\.message) + notifications.map(\.message)
            + [UCIMessage(messageType: .data, groupID: 2, opcodeID: 0, payload: [UInt8](repeating: 0x44, count: 40))]
    }()

    static func mutate(_ input: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &rng)
            switch Int.random(in: 0..<5, using: &rng) {
            case 0 where !bytes.isEmpty: bytes[position] = UInt8.random(in: 0...255, using: &rng)
            case 1 where !bytes.isEmpty: bytes[position] ^= 1 << UInt8.random(in: 0..<8, using: &rng)
            case 2: bytes.insert(UInt8.random(in: 0...255, using: &rng), at: position)
            case 3 where !bytes.isEmpty: bytes.removeSubrange(position...)
            default: if !bytes.isEmpty { bytes.remove(at: position) }
            }
        }
        return bytes
    }

    static func randomBytes(_ count: Int, _ rng: inout SplitMix64) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    /// Whatever decodes must survive encode -> decode unchanged (and encoding must not trap).
    static func checkDecoders(_ message: UCIMessage) {
        if let command = try? UCICommand(message), (try? UCICommand(command.message)) != command {
            Issue.record("command did not round-trip: \(message)")
        }
        if let response = try? UCIResponse(message), (try? UCIResponse(response.message)) != response {
            Issue.record("response did not round-trip: \(message)")
        }
        if let notification = try? UCINotification(message), (try? UCINotification(notification.message)) != notification {
            Issue.record("notification did not round-trip: \(message)")
        }
    }

    @Test func randomAndMutatedInputNeverCrash() {
        var rng = SplitMix64(state: 0x5EED_0CA1)
        var decoder = UCIStreamDecoder()
        var fed = 0, decoded = 0, errors = 0
        for _ in 0..<20_000 {
            let base = Self.corpus.randomElement(using: &rng)!
            let input: [UInt8] = switch Int.random(in: 0..<4, using: &rng) {
            case 0: Self.randomBytes(Int.random(in: 0..<300, using: &rng), &rng)
            case 1: Self.randomBytes(Int.random(in: 0..<8, using: &rng), &rng) + base.encoded()
            default: Self.mutate(base.encoded(), &rng)
            }

            // The packet parser on a slice that does not start at index 0.
            let start = Int.random(in: 0...input.count, using: &rng)
            _ = try? UCIPacket.parse(input[start...])

            // The message decoders on a mutated payload under the original header, and on a random header.
            Self.checkDecoders(UCIMessage(
                messageType: base.messageType, groupID: base.groupID, opcodeID: base.opcodeID,
                payload: Self.mutate(base.payload, &rng)))
            Self.checkDecoders(UCIMessage(
                messageType: MessageType(rawValue: UInt8.random(in: 0...3, using: &rng))!,
                groupID: UInt8.random(in: 0...3, using: &rng), opcodeID: UInt8.random(in: 0...8, using: &rng),
                payload: input))

            // The stream decoder, fed in random chunks and drained after each.
            var offset = 0
            while offset < input.count {
                let end = min(input.count, offset + Int.random(in: 1...64, using: &rng))
                decoder.append(input[offset..<end])
                fed += end - offset
                offset = end
                let before = decoder.discardedByteCount
                for step in 0... {
                    if step > 10_000 {
                        Issue.record("stream decoder made no progress")
                        return
                    }
                    do {
                        guard let message = try decoder.next() else { break }
                        decoded += 1
                        Self.checkDecoders(message)
                    } catch {
                        errors += 1
                    }
                }
                if decoder.discardedByteCount < before || decoder.discardedByteCount > fed {
                    Issue.record("discardedByteCount went from \(before) to \(decoder.discardedByteCount) after \(fed) bytes")
                }
            }
        }
        #expect(decoded > 1000)
        #expect(errors > 1000)
    }

    @Test func megabyteOfGarbageIsDroppedAndAValidPacketStillDecodes() throws {
        var rng = SplitMix64(state: 0x0BAD_F00D)
        // Octets that cannot start a packet: MT 4-7, or MT 0 without a known DPF.
        let implausible = (0...255).map(UInt8.init).filter { $0 >= 0x80 || ($0 < 0x20 && ![1, 2, 0xF].contains($0 & 0x0F)) }
        var decoder = UCIStreamDecoder()
        var fed = 0, reported = 0
        for _ in 0..<256 {  // 256 x 4 KiB = 1 MiB
            decoder.append((0..<4096).map { _ in implausible.randomElement(using: &rng)! })
            fed += 4096
            while true {
                do {
                    if try decoder.next() != nil { Issue.record("garbage decoded as a message") }
                    break
                } catch {
                    guard case let .garbage(skipped) = error else {
                        Issue.record("unexpected \(error)")
                        break
                    }
                    reported += skipped
                }
            }
            // Every garbage byte so far has been dropped, none is retained.
            #expect(decoder.discardedByteCount == fed)
        }
        #expect(reported == fed)
        let status = UCINotification.sessionStatus(session: 42, state: .idle, reason: .stateChangeWithSessionManagementCommands)
        decoder.append(status.message.encoded())
        let message = try #require(try decoder.next())
        #expect(try UCINotification(message) == status)
    }

    @Test func recoversAfterArbitraryGarbage() {
        // Without a checksum, garbage can look like a packet header and hold a partial packet or
        // message open; a flush longer than any acceptable packet, then the message twice, must
        // get through: the first copy may be lost to the bogus partial message, never the second.
        let status = UCINotification.deviceStatus(.ready).message
        for seed in 1...20 {
            var rng = SplitMix64(state: UInt64(seed))
            var decoder = UCIStreamDecoder()
            decoder.append(Self.randomBytes(16_384, &rng))
            decoder.append([UInt8](repeating: 0xFF, count: 4096 + 4))
            decoder.append(status.encoded() + status.encoded())
            var last: UCIMessage?
            for _ in 0..<100_000 {
                do {
                    guard let message = try decoder.next() else { break }
                    last = message
                } catch {}
            }
            #expect(last == status, "seed \(seed)")
        }
    }
}
