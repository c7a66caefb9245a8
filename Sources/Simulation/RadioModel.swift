import Bridge
import Glibc
import Proximity

/// How the virtual radios distort the truth. The defaults follow published DW1000/DW3000
/// behaviour and lean pessimistic (docs/PROXIMITY.md, "Radio model", lists the sources):
///
/// - **received-level bias** (Decawave APS011 Table 2): readings up to 11 cm short at strong
///   signals (close devices), up to 8.6 cm long at weak ones; the board does not correct it;
/// - **slowly varying multipath error** (σ 5 cm, 1.5× within 0.5 m where hands and bodies
///   reflect), correlated over seconds and decorrelating after ~0.3 m of movement;
/// - **body shadowing**: episodes of 1–5 s (about one every two minutes) that read 15–60 cm long,
///   lose a third of the rounds and are flagged NLoS only half the time (not below 25 cm: no body
///   fits between devices that close);
/// - **two sides of a pair** see the same physical error plus a small independent part;
/// - i.i.d. jitter (σ 6 cm), flagged NLoS rounds, unflagged outliers, dropped rounds;
/// - an **RSSI** per reading (Q7.1 in UCI 2.0): the link budget's level plus slow fading and
///   measurement noise, saturating at −35 dBm;
/// - each board's **antenna-delay offset** (`Scenario.Node.boardOffset`, or drawn per board within
///   ±`boardOffsetSpread`): 0 unless the scenario says so, i.e. calibrated boards;
/// - a **shared air** (`SharedUWBAir`): frames lost to other rounds' frames on their channel.
package struct RadioModel: Codable, Sendable, Equatable {
    /// Standard deviation of the independent, round-to-round ranging jitter, metres.
    package var sigma: Double = 0.06
    package var nlosProbability: Double = 0.05
    /// Extra path length of an NLoS round, metres (scaled by a random factor 0.5-1.5).
    package var nlosBias: Double = 0.40
    package var outlierProbability: Double = 0.01
    package var dropoutProbability: Double = 0.05
    /// Added to readings when the devices are within 15 cm (antennas and bodies at contact), on
    /// top of the received-level bias.
    package var contactBias: Double = 0
    /// The board's received-level bias: "aps011" (APS011 Table 2, uncorrected by the firmware) or
    /// "none".
    package var levelBias: LevelBias = .aps011
    /// Received level at 1 m in line of sight (free-space path loss beyond), dBm.
    package var levelAtOneMetre: Double = -63
    /// Measurement noise of the reported RSSI, dB; the level it reports saturates at `rssiCeiling`.
    package var rssiSigma: Double = 2
    package var rssiCeiling: Double = -35
    /// Slow fading of the received level (orientation, hands), dB, correlated like multipath.
    package var fadingSigma: Double = 3
    /// Slowly varying multipath ranging error: σ (metres) far from bodies, the factor within
    /// 0.5 m, and how it decorrelates (per metre moved, per second standing).
    package var multipathSigma: Double = 0.05
    package var multipathNearFactor: Double = 1.5
    package var multipathDecorrelationMetres: Double = 0.3
    package var multipathCorrelationSeconds: Double = 5
    /// Body shadowing: episodes per minute, their length (s), their extra path (m), the share of
    /// rounds lost during one, the chance an episode is flagged NLoS, and the level it costs (dB).
    package var shadowingPerMinute: Double = 0.5
    package var shadowingSeconds: [Double] = [1, 5]
    package var shadowingExtra: [Double] = [0.15, 0.60]
    package var shadowingLoss: Double = 0.3
    package var shadowingFlagged: Double = 0.5
    package var shadowingAttenuation: Double = 8
    /// No body fits between devices closer than this (metres): episodes do not touch them.
    package var shadowingMinimumDistance: Double = 0.25
    /// Independent part of each side's reading of the same round, metres.
    package var sideSigma: Double = 0.01
    /// Each board's antenna-delay offset is drawn uniformly within ± this (metres) unless the
    /// scenario node gives `boardOffset`.
    package var boardOffsetSpread: Double = 0
    /// UWB rounds fail beyond this distance.
    package var uwbRange: Double = 40
    /// BLE adverts and links fail beyond this distance.
    package var bleRange: Double = 30
    package var advertLossProbability: Double = 0.10
    /// A peer-channel message (one SDU) is lost; 0 keeps the link reliable, as L2CAP usually is.
    /// Set it to test that the peer protocol survives loss.
    package var linkLossProbability: Double = 0
    /// An attacker on the air: a peer-channel SDU arrives with one byte changed, cut short, or
    /// (after the original) an earlier SDU of the same link and direction arrives again. 0 unless
    /// a scenario asks; on a keyed event every such frame must be refused and the peers still bump.
    package var linkTamperProbability: Double = 0
    package var linkTruncateProbability: Double = 0
    package var linkReplayProbability: Double = 0
    /// The controlee misses the round's result (deferred DS-TWR sends it in a final data frame)
    /// while the controller has it, so the two sides see slightly different readings.
    package var resultLossProbability: Double = 0
    /// RSSI at 1 m and the path-loss exponent of the BLE log-distance model.
    package var rssiAtOneMetre: Double = -59
    package var pathLossExponent: Double = 2.0
    /// The air is shared: UWB frames take their real time on their channel and are lost to
    /// overlapping frames of other rounds (`SharedUWBAir`); adverts collide and controllers hold
    /// only so many connections (`SharedBLEAir`). false gives every round, advert and connection
    /// private air.
    package var sharedAir = true
    /// How much stronger (dB) a wanted frame must be than what overlaps it on its channel, and
    /// how much weaker (dB) a frame on another preamble code counts.
    package var captureMargin: Double = 10
    package var codeIsolation: Double = 6
    /// Each board's clock is off by up to this (ppm; IEEE 802.15.4's ±20 ppm), so rounds of
    /// different boards slide past each other rather than keep one offset for ever.
    package var clockTolerance: Double = 20

    package enum LevelBias: String, Codable, Sendable {
        case aps011, none
    }

    package init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case sigma, nlosProbability, nlosBias, outlierProbability, dropoutProbability, contactBias, levelBias, levelAtOneMetre
        case rssiSigma, rssiCeiling, fadingSigma, multipathSigma, multipathNearFactor, multipathDecorrelationMetres
        case multipathCorrelationSeconds, shadowingPerMinute, shadowingSeconds, shadowingExtra, shadowingLoss, shadowingFlagged
        case shadowingAttenuation, shadowingMinimumDistance, sideSigma, boardOffsetSpread, uwbRange, bleRange
        case advertLossProbability, linkLossProbability, linkTamperProbability, linkTruncateProbability, linkReplayProbability
        case resultLossProbability, rssiAtOneMetre, pathLossExponent, sharedAir, captureMargin, codeIsolation, clockTolerance
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = RadioModel()
        func value<T: Decodable>(_ key: CodingKeys, _ fallback: T) throws -> T {
            try c.decodeIfPresent(T.self, forKey: key) ?? fallback
        }
        sigma = try value(.sigma, d.sigma)
        nlosProbability = try value(.nlosProbability, d.nlosProbability)
        nlosBias = try value(.nlosBias, d.nlosBias)
        outlierProbability = try value(.outlierProbability, d.outlierProbability)
        dropoutProbability = try value(.dropoutProbability, d.dropoutProbability)
        contactBias = try value(.contactBias, d.contactBias)
        levelBias = try value(.levelBias, d.levelBias)
        levelAtOneMetre = try value(.levelAtOneMetre, d.levelAtOneMetre)
        rssiSigma = try value(.rssiSigma, d.rssiSigma)
        rssiCeiling = try value(.rssiCeiling, d.rssiCeiling)
        fadingSigma = try value(.fadingSigma, d.fadingSigma)
        multipathSigma = try value(.multipathSigma, d.multipathSigma)
        multipathNearFactor = try value(.multipathNearFactor, d.multipathNearFactor)
        multipathDecorrelationMetres = try value(.multipathDecorrelationMetres, d.multipathDecorrelationMetres)
        multipathCorrelationSeconds = try value(.multipathCorrelationSeconds, d.multipathCorrelationSeconds)
        shadowingPerMinute = try value(.shadowingPerMinute, d.shadowingPerMinute)
        shadowingSeconds = try value(.shadowingSeconds, d.shadowingSeconds)
        shadowingExtra = try value(.shadowingExtra, d.shadowingExtra)
        shadowingLoss = try value(.shadowingLoss, d.shadowingLoss)
        shadowingFlagged = try value(.shadowingFlagged, d.shadowingFlagged)
        shadowingAttenuation = try value(.shadowingAttenuation, d.shadowingAttenuation)
        shadowingMinimumDistance = try value(.shadowingMinimumDistance, d.shadowingMinimumDistance)
        sideSigma = try value(.sideSigma, d.sideSigma)
        boardOffsetSpread = try value(.boardOffsetSpread, d.boardOffsetSpread)
        uwbRange = try value(.uwbRange, d.uwbRange)
        bleRange = try value(.bleRange, d.bleRange)
        advertLossProbability = try value(.advertLossProbability, d.advertLossProbability)
        linkLossProbability = try value(.linkLossProbability, d.linkLossProbability)
        linkTamperProbability = try value(.linkTamperProbability, d.linkTamperProbability)
        linkTruncateProbability = try value(.linkTruncateProbability, d.linkTruncateProbability)
        linkReplayProbability = try value(.linkReplayProbability, d.linkReplayProbability)
        resultLossProbability = try value(.resultLossProbability, d.resultLossProbability)
        rssiAtOneMetre = try value(.rssiAtOneMetre, d.rssiAtOneMetre)
        pathLossExponent = try value(.pathLossExponent, d.pathLossExponent)
        sharedAir = try value(.sharedAir, d.sharedAir)
        captureMargin = try value(.captureMargin, d.captureMargin)
        codeIsolation = try value(.codeIsolation, d.codeIsolation)
        clockTolerance = try value(.clockTolerance, d.clockTolerance)
        guard shadowingSeconds.count == 2, shadowingExtra.count == 2 else {
            throw DecodingError.dataCorruptedError(
                forKey: .shadowingSeconds, in: c, debugDescription: "shadowingSeconds and shadowingExtra are [low, high] pairs")
        }
    }

    /// One UWB round as both sides report it: nil when the round is lost.
    package struct Reading: Equatable {
        /// What the controller reports (metres) and the level it received (dBm, as reported).
        package var metres: Double
        package var nonLineOfSight: Bool
        package var rssi: Double
        /// The controlee's reading of the same round: the same physical error, its own jitter.
        package var otherSide: Double
        package var otherRSSI: Double
    }

    /// What persists between the rounds of one pair of devices: the slowly varying errors.
    package struct PairChannel: Sendable {
        var multipath = 0.0
        var fading = 0.0
        var last: (time: Double, distance: Double)?
        var shadowStart: Double?
        var shadowEnd = -Double.infinity
        var shadowExtra = 0.0
        var shadowFlagged = false

        package init() {}
    }

    /// One round at `time` (seconds) between devices `trueDistance` apart whose boards add
    /// `boardOffsets` (metres, both boards together).
    package func rangingReading(
        trueDistance d: Double, time: Double, boardOffsets: Double = 0, channel: inout PairChannel, random: inout SplitMix64
    ) -> Reading? {
        guard d <= uwbRange else { return nil }
        advance(&channel, to: time, distance: d, random: &random)
        let shadowed = time < channel.shadowEnd && d >= shadowingMinimumDistance
        let loss = shadowed ? 1 - (1 - dropoutProbability) * (1 - shadowingLoss) : dropoutProbability
        guard random.unit() >= loss else { return nil }
        var level = LinkBudget(levelAtOneMetreDBm: levelAtOneMetre).level(atMetres: d) + channel.fading
        if shadowed { level -= shadowingAttenuation }
        var metres = d + boardOffsets + channel.multipath + sigma * random.gaussian()
        if levelBias == .aps011 { metres += RangeBiasTable.aps011PRF64.bias(atLevel: level) }
        if d < 0.15 { metres += contactBias }
        if shadowed { metres += channel.shadowExtra }
        var nlos = shadowed && channel.shadowFlagged
        if random.unit() < nlosProbability {
            nlos = true
            metres += nlosBias * (0.5 + random.unit())
        }
        if random.unit() < outlierProbability { metres += 0.5 + 2.5 * random.unit() }
        let other = metres + sideSigma * random.gaussian()
        return Reading(
            metres: metres, nonLineOfSight: nlos, rssi: reported(level, random: &random), otherSide: other,
            otherRSSI: reported(level, random: &random))
    }

    /// The RSSI a board reports for `level`: noisy, in half dB (UCI's Q7.1), saturating.
    private func reported(_ level: Double, random: inout SplitMix64) -> Double {
        (min(level + rssiSigma * random.gaussian(), rssiCeiling) * 2).rounded() / 2
    }

    /// Moves the slow processes on: first-order Gauss-Markov in time and in distance moved, and
    /// the shadowing episodes as a Poisson process.
    private func advance(_ channel: inout PairChannel, to time: Double, distance: Double, random: inout SplitMix64) {
        let near = distance < 0.5 ? multipathNearFactor : 1
        if let last = channel.last {
            let dt = max(0, time - last.time)
            let moved = abs(distance - last.distance)
            let rho = exp(-dt / max(multipathCorrelationSeconds, 1e-9) - moved / max(multipathDecorrelationMetres, 1e-9))
            let fresh = (1 - rho * rho).squareRoot()
            channel.multipath = rho * channel.multipath + fresh * multipathSigma * near * random.gaussian()
            channel.fading = rho * channel.fading + fresh * fadingSigma * random.gaussian()
        } else {
            channel.multipath = multipathSigma * near * random.gaussian()
            channel.fading = fadingSigma * random.gaussian()
        }
        channel.last = (time, distance)
        guard shadowingPerMinute > 0 else { return }
        if channel.shadowStart == nil { channel.shadowStart = time + exponential(60 / shadowingPerMinute, random: &random) }
        if let start = channel.shadowStart, time >= start {
            channel.shadowEnd = start + uniform(shadowingSeconds, random: &random)
            channel.shadowExtra = uniform(shadowingExtra, random: &random)
            channel.shadowFlagged = random.unit() < shadowingFlagged
            channel.shadowStart = channel.shadowEnd + exponential(60 / shadowingPerMinute, random: &random)
        }
    }

    private func exponential(_ mean: Double, random: inout SplitMix64) -> Double {
        -mean * log(max(random.unit(), 0x1.0p-53))
    }

    private func uniform(_ bounds: [Double], random: inout SplitMix64) -> Double {
        bounds[0] + (bounds[1] - bounds[0]) * random.unit()
    }

    /// A board's antenna-delay offset when the scenario does not give one.
    package func boardOffset(random: inout SplitMix64) -> Double {
        boardOffsetSpread > 0 ? boardOffsetSpread * (2 * random.unit() - 1) : 0
    }

    /// Whether something that fails with `probability` fails this time. Draws nothing when it
    /// cannot fail, so adding a zero-probability loss leaves seeded runs unchanged.
    package func fails(_ probability: Double, random: inout SplitMix64) -> Bool {
        probability > 0 && random.unit() < probability
    }

    /// RSSI of one received advert, or nil if it was not received.
    package func advertRSSI(distance: Double, random: inout SplitMix64) -> Int? {
        guard distance <= bleRange, random.unit() >= advertLossProbability else { return nil }
        return Int((advertLevel(distance: distance) + 2 * random.gaussian()).rounded())
    }

    /// The level (dBm) an advert sent from `distance` away arrives at, before its noise.
    package func advertLevel(distance: Double) -> Double {
        rssiAtOneMetre - 10 * pathLossExponent * log10(max(distance, 0.1))
    }
}
