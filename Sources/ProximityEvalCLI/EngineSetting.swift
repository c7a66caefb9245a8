import ArgumentParser
import Foundation
import Proximity
import ProximityEvaluation

/// One engine setting given on the command line.
struct EngineSetting: ExpressibleByArgument {
    static let settings: [String: WritableKeyPath<ProximityConfig, Double> & Sendable] = [
        "evidenceAfterApproach": \.evidenceAfterApproach, "evidenceWhileLingering": \.evidenceWhileLingering,
        "handOverMarginMetres": \.handOverMarginMetres, "rangeOnlyHandOverMarginMetres": \.rangeOnlyHandOverMarginMetres, "rangeOnlyEvidenceAfterApproach": \.rangeOnlyEvidenceAfterApproach, "rangeOnlyEvidenceWhileLingering": \.rangeOnlyEvidenceWhileLingering, "rangeOnlyApproachDescentMetres": \.rangeOnlyApproachDescentMetres, "clearMetres": \.clearMetres, "rangingSigmaMetres": \.rangingSigmaMetres,
        "levelSigmaDB": \.levelSigmaDB, "levelEvidenceCap": \.levelEvidenceCap, "levelCeilingDBm": \.levelCeilingDBm, "bumpMetres": \.bumpMetres,
    ]
    static var names: [String] { settings.keys.sorted() }

    let path: WritableKeyPath<ProximityConfig, Double> & Sendable
    let value: Double

    init?(argument: String) {
        let parts = argument.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, let path = Self.settings[parts[0]], let value = Double(parts[1]) else { return nil }
        self.path = path
        self.value = value
    }

    func apply(to config: inout ProximityConfig) {
        config[keyPath: path] = value
    }
}
