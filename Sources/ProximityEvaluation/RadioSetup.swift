import Bridge
import Proximity
import Simulation

/// One way of ranging the evaluation measures: how the radio and the board behave and what the
/// bridge does about it (a row of the table).
package struct RadioSetup: Sendable {
    package var name: String
    package var radio: RadioModel
    /// What is subtracted from each reading.
    package var correction: Correction
    /// Whether the board reports RSSI (the correction then looks the bias up at it, and the
    /// contact test weighs it).
    package var reportsRSSI: Bool
    /// How far the board's RSSI is off (dB, added to every reported level): a board whose level
    /// is miscalibrated by a constant.
    package var rssiErrorDB: Double
    /// Both boards' uncalibrated antenna-delay offset, drawn per situation within ± this (m).
    package var offsetSpread: Double
    /// Whether the quality targets apply to this row.
    package var targeted: Bool

    /// What the bridge does to a reading: its `RangeCorrection`, or (a negative control) the
    /// correction of 2026-11-25, which looked the bias up at a level derived from the distance
    /// when the board reported none.
    package enum Correction: Sendable {
        case bridge(RangeCorrection)
        case levelFromDistance(RangeBiasTable)

        func correct(_ reading: Double, rssi: Double?) -> Double {
            switch self {
            case .bridge(let correction): return correction.correct(reading, rssi: rssi)
            case .levelFromDistance(let table):
                if let rssi { return reading - table.bias(atLevel: rssi) }
                var estimate = reading
                for _ in 0..<3 { estimate = reading - table.bias(atLevel: LinkBudget().level(atMetres: estimate)) }
                return estimate
            }
        }
    }

    package init(
        name: String, radio: RadioModel = RadioModel(), correction: Correction = .bridge(.dw3000), reportsRSSI: Bool,
        rssiErrorDB: Double = 0, offsetSpread: Double = 0, targeted: Bool
    ) {
        self.name = name
        self.radio = radio
        self.correction = correction
        self.reportsRSSI = reportsRSSI
        self.rssiErrorDB = rssiErrorDB
        self.offsetSpread = offsetSpread
        self.targeted = targeted
    }

    /// The realistic radio (RadioModel's defaults), bias corrected from RSSI, calibrated boards.
    package static let realistic = RadioSetup(name: "RSSI reported, calibrated", reportsRSSI: true, targeted: true)
    /// Boards whose RSSI reads a constant too high or too low (transmit power, antenna, firmware).
    package static let rssiTooHigh = RadioSetup(
        name: "RSSI reported 6 dB too high, calibrated", reportsRSSI: true, rssiErrorDB: 6, targeted: true)
    package static let rssiTooLow = RadioSetup(
        name: "RSSI reported 6 dB too low, calibrated", reportsRSSI: true, rssiErrorDB: -6, targeted: true)
    /// A board that reports no RSSI (UCI 1.1 range data), calibrated: `nearby-bridge calibrate`
    /// without RSSI filed the offset that takes the near-field bias with it.
    package static let withoutRSSI = RadioSetup(
        name: "no RSSI (UCI 1.1 layout), calibrated",
        correction: .bridge(
            RangeCorrection(
                table: .aps011PRF64, tableName: "aps011-prf64", offsetMetres: calibrationWithoutRSSI(RadioModel()), calibrated: true)),
        reportsRSSI: false, targeted: true)
    /// The same board never calibrated: its bias and ±15 cm of antenna delay per pair in every reading.
    package static let withoutRSSIUncalibrated = RadioSetup(
        name: "no RSSI, uncalibrated (its bias and ±15 cm per pair as reported)", reportsRSSI: false, offsetSpread: 0.15,
        targeted: true)
    /// A board without RSSI whose firmware corrects its own bias (the board: a touch reads
    /// 3 cm), uncalibrated.
    package static let withoutRSSISelfCorrecting = RadioSetup(
        name: "no RSSI, firmware corrects its bias, uncalibrated", radio: selfCorrectingBoard, reportsRSSI: false,
        targeted: true)
    /// Negative control: that board under the correction of 2026-11-25 (bias at a level derived
    /// from the distance): touches read 11 cm long.
    package static let withoutRSSILevelFromDistance = RadioSetup(
        name: "no RSSI, firmware corrects its bias, bias guessed from distance (before issue 29)", radio: selfCorrectingBoard,
        correction: .levelFromDistance(.aps011PRF64), reportsRSSI: false, targeted: false)
    private static let selfCorrectingBoard: RadioModel = {
        var radio = RadioModel()
        radio.levelBias = .none
        return radio
    }()
    /// Boards with RSSI whose antenna delays were never calibrated: ±15 cm per pair.
    package static let uncalibrated = RadioSetup(
        name: "RSSI reported, uncalibrated (±15 cm)", reportsRSSI: true, offsetSpread: 0.15, targeted: false)
    /// No bias correction on the biased radio: a negative control.
    package static let uncorrected = RadioSetup(
        name: "RSSI reported, not corrected", correction: .bridge(.none), reportsRSSI: true, targeted: false)

    package static let all: [RadioSetup] = [
        realistic, rssiTooHigh, rssiTooLow, withoutRSSI, withoutRSSIUncalibrated, withoutRSSISelfCorrecting,
        withoutRSSILevelFromDistance, uncalibrated, uncorrected,
    ]

    /// The offset `nearby-bridge calibrate` files for a board without RSSI on `radio` (its default
    /// steps: touching, 2 cm, and 1.00 m; no bias is looked up without a level): the mean of
    /// reading minus truth at both, without noise. A calibrated board with RSSI files 0 here.
    package static func calibrationWithoutRSSI(_ radio: RadioModel) -> Double {
        guard radio.levelBias == .aps011 else { return 0 }
        let budget = LinkBudget(levelAtOneMetreDBm: radio.levelAtOneMetre)
        return [0.02, 1.0].map { RangeBiasTable.aps011PRF64.bias(atLevel: budget.level(atMetres: $0)) }.reduce(0, +) / 2
    }
}
