import Benchmark
import Crypto
import Glibc
import PeerProtocol
import PeerSecurity

// MARK: Peer protocol v2 security: what the handshake, sealed frames and private adverts cost

/// The event key and the inputs every security benchmark uses.
private enum SecurityFixtures {
    static let key = try! GroupKey(bytes: (0..<32).map { UInt8($0) })
    static let otherEventKey = try! GroupKey(bytes: [UInt8](repeating: 0xA5, count: 32))
    /// Derived once per node (`PeerChannels`), not per handshake.
    static let psk = KeySchedule.handshakePSK(key)
    /// A rig's advert, as `BridgeNode` makes it private.
    static let advert = Advertisement(group: 0, peerID: PeerID(0x0123_4567_89AB_CDEF), uwbShortAddress: 0x1234, capabilities: [.uwb, .oneToMany], psm: 0x85)
    /// The `hello` a v2 rig sends first on a link.
    static let hello = PeerMessage.hello(.init(peerID: PeerID(0x0123_4567_89AB_CDEF), group: 0, name: "rig-alice", versions: 0b11, capabilities: [.oneToMany]))
    /// The same `hello` as a v1 rig sends it, in the clear: the baseline.
    static let helloV1 = PeerMessage.hello(.init(peerID: PeerID(0x0123_4567_89AB_CDEF), group: 1, name: "rig-alice"))
    /// A card of 200 bytes of JSON, a typical bump.
    static let card: PeerMessage = .card(bumpID: 7, cardJSON: cardJSON)
    static let cardJSON: String = {
        let start = #"{"name":"Alice Example","org":"Example Labs","title":"Firmware engineer","email":"alice@example.org","phone":"+44 20 7946 0000","url":"https://example.org/alice","note":""#
        return start + String(repeating: "x", count: 200 - start.utf8.count - 2) + #""}"#
    }()
    static let sixtyFourBytes = [UInt8](repeating: 0x5A, count: 64)
}

/// One whole v2 handshake as two rigs run it (`PeerChannels`), both sides in this process: two
/// fresh X25519 ephemeral keys, the initiator's message 1 framed, the responder reading it and
/// answering with message 2 framed, the initiator reading that; both sides split into transport
/// keys, derive the link's ranging secret and the STS of its first UWB session. The event key's
/// PSK is derived once per node, so not here.
@inline(never)
private func fullHandshake(psk: [UInt8], sessionID: UInt32) throws -> (RangingKeys, RangingKeys) {
    var initiator = NoiseHandshake(role: .initiator, psk: psk, ephemeral: Curve25519.KeyAgreement.PrivateKey())
    var responder = NoiseHandshake(role: .responder, psk: psk, ephemeral: Curve25519.KeyAgreement.PrivateKey())
    let frame1 = SecureFrame.handshakeInitiation(initiator.writeInitiation()).encoded()
    guard case .handshakeInitiation(let message1) = try SecureFrame(frame: frame1) else { fatalError("not message 1") }
    _ = try responder.readInitiation(message1)
    let (message2, responderKeys) = try responder.writeResponse()
    let frame2 = SecureFrame.handshakeResponse(message2).encoded()
    guard case .handshakeResponse(let answer) = try SecureFrame(frame: frame2) else { fatalError("not message 2") }
    let (_, initiatorKeys) = try initiator.readResponse(answer)
    return (
        RangingKeys(rangingSecret: initiatorKeys.rangingSecret, sessionID: sessionID),
        RangingKeys(rangingSecret: responderKeys.rangingSecret, sessionID: sessionID)
    )
}

/// Two ends of an established channel.
private func establishedChannels() -> (sender: SecureChannel, receiver: SecureChannel) {
    var initiator = NoiseHandshake(role: .initiator, psk: SecurityFixtures.psk, ephemeral: Curve25519.KeyAgreement.PrivateKey())
    var responder = NoiseHandshake(role: .responder, psk: SecurityFixtures.psk, ephemeral: Curve25519.KeyAgreement.PrivateKey())
    _ = try! responder.readInitiation(initiator.writeInitiation())
    let (message2, responderKeys) = try! responder.writeResponse()
    let (_, initiatorKeys) = try! initiator.readResponse(message2)
    return (SecureChannel(keys: initiatorKeys), SecureChannel(keys: responderKeys))
}

/// Seals `message` on one end and opens it on the other, as the SDU crosses the link.
@inline(__always)
private func sealAndOpen(_ message: PeerMessage, _ sender: inout SecureChannel, _ receiver: inout SecureChannel) throws -> PeerMessage {
    try receiver.open(SecureFrame(frame: sender.seal(message)))
}

/// A rotation nonce per call, as `BridgeNode` draws a new one each period.
@inline(__always)
private func nonce(_ counter: UInt64) -> [UInt8] {
    [UInt8(truncatingIfNeeded: counter), UInt8(truncatingIfNeeded: counter >> 8), UInt8(truncatingIfNeeded: counter >> 16), UInt8(truncatingIfNeeded: counter >> 24), 0x5E]
}

/// The baseline: a v1 `hello` encoded and decoded, in the clear (what a v1 link pays per message).
@inline(__always)
private func helloV1RoundTrip() throws -> PeerMessage {
    try PeerMessage(frame: SecurityFixtures.helloV1.encoded())
}

func securityBenchmarks() {
    // No `.cpuTotal`: on Linux package-benchmark reads it in scheduler ticks (10 ms), so a call
    // of a few µs shows 0 or 10 000 ns. CPU per call comes from `securityRatios` instead.
    let metrics: [BenchmarkMetric] = [.wallClock, .throughput, .mallocCountTotal]
    let perThousand = Benchmark.Configuration(metrics: metrics, maxDuration: .seconds(3))

    Benchmark(
        "security: full handshake, both sides, per handshake",
        configuration: .init(metrics: metrics, warmupIterations: 3, scalingFactor: .one, maxDuration: .seconds(3))
    ) { benchmark in
        var session: UInt32 = 0
        for _ in benchmark.scaledIterations {
            session &+= 1
            blackHole(try fullHandshake(psk: SecurityFixtures.psk, sessionID: session))
        }
    }

    Benchmark("security: seal + open, card of 200 bytes, per 1000", configuration: perThousand) { benchmark in
        var (sender, receiver) = establishedChannels()
        for _ in benchmark.scaledIterations { blackHole(try sealAndOpen(SecurityFixtures.card, &sender, &receiver)) }
    }

    Benchmark("security: seal + open, hello, per 1000", configuration: perThousand) { benchmark in
        var (sender, receiver) = establishedChannels()
        for _ in benchmark.scaledIterations { blackHole(try sealAndOpen(SecurityFixtures.hello, &sender, &receiver)) }
    }

    Benchmark("security: private advert make + open (a member resolves it), per 1000", configuration: perThousand) { benchmark in
        let adverts = PrivateAdvert(key: SecurityFixtures.key)
        var counter: UInt64 = 0
        for _ in benchmark.scaledIterations {
            counter &+= 1
            blackHole(adverts.open(adverts.advertisingData(for: SecurityFixtures.advert, nonce: nonce(counter))))
        }
    }

    Benchmark("security: private advert open, another event's key (outsider, resolves nothing), per 1000", configuration: perThousand) { benchmark in
        let made = PrivateAdvert(key: SecurityFixtures.key)
        let heard = (0..<64).map { made.advertisingData(for: SecurityFixtures.advert, nonce: nonce(UInt64($0))) }
        let outsider = PrivateAdvert(key: SecurityFixtures.otherEventKey)
        var next = 0
        for _ in benchmark.scaledIterations {
            blackHole(outsider.open(heard[next]))
            next = (next + 1) & 63
        }
    }

    Benchmark("security: baseline, v1 hello encode + decode (in the clear), per 1000", configuration: perThousand) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try helloV1RoundTrip()) }
    }

    Benchmark("security: baseline, SHA-256 of 64 bytes, per 1000", configuration: perThousand) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(SHA256.hash(data: SecurityFixtures.sixtyFourBytes)) }
    }

    securityRatios()
}

// MARK: The ratios, in one process

/// package-benchmark runs each benchmark in a process of its own, so the figures above cannot be
/// divided by each other reliably (absolute figures move 2-3x between machines, and by tens of
/// per cent within minutes on a shared VM). Here every workload and both baselines take turns in
/// one process: `turns` rounds, each workload timed for about 0.1 s of this thread's CPU
/// (`CLOCK_THREAD_CPUTIME_ID`, so time the VM gives to others is not counted) per round; each
/// figure is the median of its rounds, each ratio the median of the rounds' own ratios.
func securityRatios() {
    let metrics: [BenchmarkMetric] = [
        .custom("handshake, both sides, CPU (ns)", useScalingFactor: false),
        .custom("baseline v1 hello encode + decode, CPU (ns)", useScalingFactor: false),
        .custom("baseline SHA-256 of 64 bytes, CPU (ns)", useScalingFactor: false),
        .custom("handshake / v1 hello encode + decode, median of turns", useScalingFactor: false),
        .custom("handshake / SHA-256 of 64 bytes, median of turns", useScalingFactor: false),
        .custom("sealed card / v1 hello, median of turns (×100)", useScalingFactor: false),
        .custom("sealed hello / v1 hello, median of turns (×100)", useScalingFactor: false),
        .custom("advert make + open / v1 hello, median of turns (×100)", useScalingFactor: false),
        .custom("outsider advert open / v1 hello, median of turns (×100)", useScalingFactor: false),
    ]
    Benchmark(
        "security: ratios to the baselines, in one process",
        configuration: .init(metrics: metrics, warmupIterations: 0, scalingFactor: .one, maxDuration: .seconds(60), maxIterations: 1)
    ) { benchmark in
        let turns = 5
        var (sender, receiver) = establishedChannels()
        let adverts = PrivateAdvert(key: SecurityFixtures.key)
        let outsider = PrivateAdvert(key: SecurityFixtures.otherEventKey)
        let heard = (0..<64).map { adverts.advertisingData(for: SecurityFixtures.advert, nonce: nonce(UInt64($0))) }
        var counter: UInt64 = 0
        let ephemeral = Curve25519.KeyAgreement.PrivateKey()
        let ephemeralRaw = Array(ephemeral.rawRepresentation)
        let peerPublic = Curve25519.KeyAgreement.PrivateKey().publicKey
        // What is timed works: both sides agree, frames open to what was sealed, only members resolve.
        let (initiatorSTS, responderSTS) = try fullHandshake(psk: SecurityFixtures.psk, sessionID: 1)
        precondition(initiatorSTS == responderSTS, "both sides derive the same STS")
        let opened = try sealAndOpen(SecurityFixtures.card, &sender, &receiver)
        precondition(opened == SecurityFixtures.card, "a sealed frame opens to what was sealed")
        precondition(adverts.open(heard[0]) == SecurityFixtures.advert && outsider.open(heard[0]) == nil)
        // Names, in the order of the table; the last three are parts of the handshake, for reading it.
        let workloads: [(name: String, run: () throws -> Void)] = [
            ("full handshake, both sides", {
                counter &+= 1
                blackHole(try fullHandshake(psk: SecurityFixtures.psk, sessionID: UInt32(truncatingIfNeeded: counter)))
            }),
            ("seal + open, card of \(SecurityFixtures.cardJSON.utf8.count) B", { blackHole(try sealAndOpen(SecurityFixtures.card, &sender, &receiver)) }),
            ("seal + open, hello", { blackHole(try sealAndOpen(SecurityFixtures.hello, &sender, &receiver)) }),
            ("private advert make + open", {
                counter &+= 1
                blackHole(adverts.open(adverts.advertisingData(for: SecurityFixtures.advert, nonce: nonce(counter))))
            }),
            ("private advert open, outsider", {
                counter &+= 1
                blackHole(outsider.open(heard[Int(counter & 63)]))
            }),
            ("baseline: v1 hello encode + decode", { blackHole(try helloV1RoundTrip()) }),
            ("baseline: SHA-256 of 64 bytes", { blackHole(SHA256.hash(data: SecurityFixtures.sixtyFourBytes)) }),
            ("  part: X25519 key generation", { blackHole(Curve25519.KeyAgreement.PrivateKey()) }),
            ("  part: X25519 key from raw bytes", { blackHole(try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: ephemeralRaw)) }),
            ("  part: X25519 shared secret", { blackHole(try ephemeral.sharedSecretFromKeyAgreement(with: peerPublic)) }),
        ]
        let hello = 5, sha = 6
        // A calibration round (unmeasured, also the warm-up): how many calls make about 0.1 s.
        let counts = try workloads.map { workload in
            var count = 1
            while true {
                let seconds = try cpuSeconds(count, workload.run)
                if seconds >= 0.02 { return max(1, Int(Double(count) * 0.1 / seconds)) }
                count *= 4
            }
        }
        var perCall = [[Double]](repeating: [], count: workloads.count)  // seconds, per workload per turn
        for _ in 0..<turns {
            for (index, workload) in workloads.enumerated() {
                perCall[index].append(try cpuSeconds(counts[index], workload.run) / Double(counts[index]))
            }
        }
        let medians = perCall.map(medianOf)
        let ratioTo = { (index: Int, base: Int) in medianOf(zip(perCall[index], perCall[base]).map { $0 / $1 }) }

        benchmark.measurement(metrics[0], Int(medians[0] * 1e9))
        benchmark.measurement(metrics[1], Int(medians[hello] * 1e9))
        benchmark.measurement(metrics[2], Int(medians[sha] * 1e9))
        benchmark.measurement(metrics[3], Int(ratioTo(0, hello).rounded()))
        benchmark.measurement(metrics[4], Int(ratioTo(0, sha).rounded()))
        for (metric, index) in zip(metrics[5...], 1...4) { benchmark.measurement(metric, Int((ratioTo(index, hello) * 100).rounded())) }

        func format(_ seconds: Double) -> String {
            seconds >= 1e-3 ? String(format: "%8.2f ms", seconds * 1e3) : seconds >= 1e-6 ? String(format: "%8.2f µs", seconds * 1e6) : String(format: "%8.0f ns", seconds * 1e9)
        }
        var lines = ["", "\(turns) turns, each workload timed for about 0.1 s of thread CPU per turn; medians of the turns, ratios the median of each turn's own ratio:",
                     "workload".padding(toLength: 40, withPad: " ", startingAt: 0) + "  CPU per call   × v1 hello   × SHA-256   turns"]
        for (index, workload) in workloads.enumerated() {
            lines.append(
                workload.name.padding(toLength: 40, withPad: " ", startingAt: 0) + "  " + format(medians[index])
                    + String(format: "  %10.1f  %10.1f", ratioTo(index, hello), ratioTo(index, sha)) + "   "
                    + perCall[index].map { format($0).trimmingPrefix(while: { $0 == " " }) }.joined(separator: ", "))
        }
        lines.append("")
        print(lines.joined(separator: "\n"))
    }
}

/// This thread's CPU seconds for `count` calls of `body`.
private func cpuSeconds(_ count: Int, _ body: () throws -> Void) rethrows -> Double {
    let start = threadCPUSeconds()
    for _ in 0..<count { try body() }
    return threadCPUSeconds() - start
}

private func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}
