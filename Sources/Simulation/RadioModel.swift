import Bridge
import Glibc

/// How the virtual radios distort the truth. Defaults follow a DW3000-class radio indoors:
/// σ ≈ 10 cm ranging noise (the datasheet's "10 cm"), occasional NLoS rounds read long, rare
/// outliers, dropped rounds, and readings pulled slightly short (even negative) at contact.
public struct RadioModel: Codable, Sendable, Equatable {
    /// Standard deviation of ranging noise, metres.
    public var sigma: Double = 0.10
    public var nlosProbability: Double = 0.05
    /// Extra path length of an NLoS round, metres (scaled by a random factor 0.5-1.5).
    public var nlosBias: Double = 0.40
    public var outlierProbability: Double = 0.01
    public var dropoutProbability: Double = 0.05
    /// Added to readings when the devices are within 15 cm: antennas and bodies at contact.
    public var contactBias: Double = -0.03
    /// UWB rounds fail beyond this distance.
    public var uwbRange: Double = 40
    /// BLE adverts and links fail beyond this distance.
    public var bleRange: Double = 30
    public var advertLossProbability: Double = 0.10
    /// A peer-channel message (one SDU) is lost; 0 keeps the link reliable, as L2CAP usually is.
    /// Set it to test that the peer protocol survives loss.
    public var linkLossProbability: Double = 0
    /// The controlee misses the round's result (deferred DS-TWR sends it in a final data frame)
    /// while the controller has it, so the two sides see slightly different readings.
    public var resultLossProbability: Double = 0
    /// RSSI at 1 m and the path-loss exponent of the log-distance model.
    public var rssiAtOneMetre: Double = -59
    public var pathLossExponent: Double = 2.0

    public init() {}

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = RadioModel()
        sigma = try c.decodeIfPresent(Double.self, forKey: .sigma) ?? d.sigma
        nlosProbability = try c.decodeIfPresent(Double.self, forKey: .nlosProbability) ?? d.nlosProbability
        nlosBias = try c.decodeIfPresent(Double.self, forKey: .nlosBias) ?? d.nlosBias
        outlierProbability = try c.decodeIfPresent(Double.self, forKey: .outlierProbability) ?? d.outlierProbability
        dropoutProbability = try c.decodeIfPresent(Double.self, forKey: .dropoutProbability) ?? d.dropoutProbability
        contactBias = try c.decodeIfPresent(Double.self, forKey: .contactBias) ?? d.contactBias
        uwbRange = try c.decodeIfPresent(Double.self, forKey: .uwbRange) ?? d.uwbRange
        bleRange = try c.decodeIfPresent(Double.self, forKey: .bleRange) ?? d.bleRange
        advertLossProbability = try c.decodeIfPresent(Double.self, forKey: .advertLossProbability) ?? d.advertLossProbability
        linkLossProbability = try c.decodeIfPresent(Double.self, forKey: .linkLossProbability) ?? d.linkLossProbability
        resultLossProbability = try c.decodeIfPresent(Double.self, forKey: .resultLossProbability) ?? d.resultLossProbability
        rssiAtOneMetre = try c.decodeIfPresent(Double.self, forKey: .rssiAtOneMetre) ?? d.rssiAtOneMetre
        pathLossExponent = try c.decodeIfPresent(Double.self, forKey: .pathLossExponent) ?? d.pathLossExponent
    }

    /// One UWB round's reading: nil when the round is lost.
    public struct Reading: Equatable {
        public var metres: Double
        public var nonLineOfSight: Bool
    }

    public func rangingReading(trueDistance: Double, random: inout SplitMix64) -> Reading? {
        guard trueDistance <= uwbRange, random.unit() >= dropoutProbability else { return nil }
        var metres = trueDistance + sigma * random.gaussian()
        if trueDistance < 0.15 { metres += contactBias }
        let nlos = random.unit() < nlosProbability
        if nlos { metres += nlosBias * (0.5 + random.unit()) }
        if random.unit() < outlierProbability { metres += 0.5 + 2.5 * random.unit() }
        return Reading(metres: metres, nonLineOfSight: nlos)
    }

    /// Whether something that fails with `probability` fails this time. Draws nothing when it
    /// cannot fail, so adding a zero-probability loss leaves seeded runs unchanged.
    public func fails(_ probability: Double, random: inout SplitMix64) -> Bool {
        probability > 0 && random.unit() < probability
    }

    /// RSSI of one received advert, or nil if it was not received.
    public func advertRSSI(distance: Double, random: inout SplitMix64) -> Int? {
        guard distance <= bleRange, random.unit() >= advertLossProbability else { return nil }
        let rssi = rssiAtOneMetre - 10 * pathLossExponent * log10(max(distance, 0.1)) + 2 * random.gaussian()
        return Int(rssi.rounded())
    }
}
