import UCI

/// How long each frame of a FiRa ranging round occupies its channel, from the session's app
/// config, per IEEE 802.15.4z HRP-ERDEV with the base pulse repetition frequency (BPRF, mean
/// PRF 62.4 MHz, the one every FiRa device supports):
///
/// - chips at 499.2 MHz; a preamble symbol of a length-127 code with spreading 4 lasts
///   127 × 4 chips = 1017.63 ns (802.15.4-2020 Table 15-10, `Tpsym` at mean PRF 62.4 MHz);
/// - SHR: PREAMBLE_DURATION symbols (0 → 32, 1 → 64, the FiRa default) plus the SFD
///   (SFD_ID 0 and 2 → 8 symbols, 1 → 4, 3 → 16, 4 → 32);
/// - STS: NUMBER_OF_STS_SEGMENTS segments of STS_LENGTH × 512 chips (0 → 32, 1 → 64, 2 → 128)
///   each followed by a 512-chip gap; SP1 and SP3 frames carry it, SP0 frames do not;
/// - PHR: 19 bits at the 0.98 Mb/s rate (1025.64 ns per bit; BPRF sends the PHR slow unless
///   asked otherwise);
/// - PSDU: 128.21 ns per bit at 6.81 Mb/s (PSDU_DATA_RATE 0; 1 → 7.80 Mb/s alike), plus 48
///   Reed-Solomon parity bits per 330-bit block.
///
/// A round in FiRa's deferred DS-TWR puts its frames in consecutive slots of SLOT_DURATION
/// RSTU (1 RSTU = 1/1.2 MHz = 833.3 ns; the default 2400 RSTU is 2 ms): the ranging control
/// message (SP0), poll, response(s) and final (RFRAME_CONFIG, SP3 by default: SHR and STS, no
/// payload), then the measurement report (SP0) that gives the controlee the result. The
/// control and report frames' payload sizes are estimates of the MAC frames with their
/// information elements (40 and 48 octets), not taken from a capture.
package struct UWBFrameTiming: Equatable, Sendable {
    package var preambleSymbols: Int
    package var sfdSymbols: Int
    package var stsSegments: Int
    package var stsSegmentChips: Int
    package var rframeConfig: UInt8
    package var slotMicroseconds: Double

    static let chipMicroseconds = 1 / 499.2
    static let preambleSymbolMicroseconds = 127.0 * 4 * chipMicroseconds
    static let phrBitMicroseconds = 1.02564
    static let dataBitMicroseconds = 0.12821
    static let controlOctets = 40
    static let reportOctets = 48

    /// FiRa's defaults for whatever the config leaves out.
    package init(config: [AppConfigID: [UInt8]]) {
        func byte(_ id: AppConfigID, _ fallback: UInt8) -> UInt8 { config[id]?.first ?? fallback }
        preambleSymbols = byte(.preambleDuration, 1) == 0 ? 32 : 64
        sfdSymbols = [0: 8, 1: 4, 2: 8, 3: 16, 4: 32][byte(.sfdID, 2)] ?? 8
        stsSegments = Int(byte(.numberOfSTSSegments, 1))
        stsSegmentChips = ([0: 32, 1: 64, 2: 128][byte(.stsLength, 1)] ?? 64) * 512
        rframeConfig = byte(.rframeConfig, 3)
        let rstu = config[.slotDuration].flatMap { $0.count == 2 ? Int($0[0]) | Int($0[1]) << 8 : nil } ?? 2400
        slotMicroseconds = Double(rstu) / 1.2
    }

    var shrMicroseconds: Double { Double(preambleSymbols + sfdSymbols) * Self.preambleSymbolMicroseconds }
    var stsMicroseconds: Double { Double(stsSegments * (stsSegmentChips + 512)) * Self.chipMicroseconds }

    /// A data frame without STS (SP0) carrying `octets` of PSDU.
    func dataFrameMicroseconds(octets: Int) -> Double {
        let bits = octets * 8
        let parity = 48 * ((bits + 329) / 330)
        return shrMicroseconds + 19 * Self.phrBitMicroseconds + Double(bits + parity) * Self.dataBitMicroseconds
    }

    /// A ranging frame (poll, response, final) as RFRAME_CONFIG says: SP3 has no PHR or payload.
    var rangingFrameMicroseconds: Double {
        switch rframeConfig {
        case 0: dataFrameMicroseconds(octets: 0)
        case 3: shrMicroseconds + stsMicroseconds
        default: dataFrameMicroseconds(octets: 0) + stsMicroseconds
        }
    }

    var controlFrameMicroseconds: Double { dataFrameMicroseconds(octets: Self.controlOctets) }
    var reportFrameMicroseconds: Double { dataFrameMicroseconds(octets: Self.reportOctets) }
}
