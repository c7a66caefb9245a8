import Glibc

/// The UWB air every body of the world shares (docs/PROXIMITY.md, "Shared air"): where a
/// round's frames fall in time, and whether one survives the others on its channel.
///
/// A frame is lost at its receiver when the receiver transmits meanwhile (one radio, half
/// duplex), or when frames of other rounds on the same channel overlap it there and the wanted
/// one is not `captureMargin` dB above their summed level. A receiver that has locked onto one
/// preamble does not reliably capture a stronger one that starts later, and a weaker one that
/// starts first can set the first path (Qorvo's answer on its forum, "Multiple preamble
/// disaggregation"): the margin is set high to stand for both. Another preamble code counts as
/// `codeIsolation` dB weaker: the codes' cross-correlation is low, not zero (Qorvo APH010 on
/// codes sharing a channel), and the figure is a pessimistic assumption, not a measurement.
/// Other channels do not interfere. Levels follow the link budget without fading.
package struct SharedUWBAir: Sendable {
    package var captureMargin: Double
    package var codeIsolation: Double
    package var range: Double

    /// The frames of one round starting at `start` (µs): the control message from the
    /// controller to each controlee, the poll, each responder's response in its own slot, the
    /// final and the report, from the initiator (one-to-many: the controller is the initiator).
    /// Without controlees the controller still sends its control message and, as initiator,
    /// its poll.
    package static func roundFrames(
        round: Int, start: Double, timing: UWBFrameTiming, channel: UInt8, preambleCode: UInt8,
        controller: Int, controllerInitiates: Bool, controlees: [Int]
    ) -> [UWBAirFrame] {
        var frames: [UWBAirFrame] = []
        func add(_ kind: UWBAirFrame.Kind, slot: Int, from: Int, to: Int?, length: Double) {
            let at = start + Double(slot) * timing.slotMicroseconds
            frames.append(
                UWBAirFrame(
                    kind: kind, round: round, slot: slot, channel: channel, preambleCode: preambleCode, transmitter: from,
                    receiver: to, start: at, end: at + length))
        }
        let ranging = timing.rangingFrameMicroseconds
        guard !controlees.isEmpty else {
            add(.control, slot: 0, from: controller, to: nil, length: timing.controlFrameMicroseconds)
            if controllerInitiates { add(.poll, slot: 1, from: controller, to: nil, length: ranging) }
            return frames
        }
        if controlees.count == 1, !controllerInitiates {
            let controlee = controlees[0]
            add(.control, slot: 0, from: controller, to: controlee, length: timing.controlFrameMicroseconds)
            add(.poll, slot: 1, from: controlee, to: controller, length: ranging)
            add(.response, slot: 2, from: controller, to: controlee, length: ranging)
            add(.final, slot: 3, from: controlee, to: controller, length: ranging)
            add(.report, slot: 4, from: controlee, to: controller, length: timing.reportFrameMicroseconds)
            return frames
        }
        for controlee in controlees {
            add(.control, slot: 0, from: controller, to: controlee, length: timing.controlFrameMicroseconds)
            add(.poll, slot: 1, from: controller, to: controlee, length: ranging)
        }
        for (index, controlee) in controlees.enumerated() {
            add(.response, slot: 2 + index, from: controlee, to: controller, length: ranging)
        }
        for controlee in controlees {
            add(.final, slot: 2 + controlees.count, from: controller, to: controlee, length: ranging)
            add(.report, slot: 3 + controlees.count, from: controller, to: controlee, length: timing.reportFrameMicroseconds)
        }
        return frames
    }

    /// Whether `wanted` is lost at its receiver among `air` (every frame on the air around it,
    /// its own round's included and ignored). `link` says how far apart two bodies are and at
    /// what level (dBm) a frame of the first reaches the second.
    package func lost(
        _ wanted: UWBAirFrame, among air: some Collection<UWBAirFrame>, link: (Int, Int) -> (metres: Double, level: Double)
    ) -> Bool {
        guard let receiver = wanted.receiver else { return false }
        var interference = 0.0
        var counted: Set<Int> = []
        for frame in air where frame.round != wanted.round && frame.overlaps(wanted) {
            if frame.transmitter == receiver { return true }
            guard frame.channel == wanted.channel else { continue }
            let heard = link(frame.transmitter, receiver)
            guard heard.metres <= range else { continue }
            // a frame several bodies listen to is on the air once
            guard counted.insert(frame.round &* 64 &+ frame.slot).inserted else { continue }
            let isolation = frame.preambleCode == wanted.preambleCode ? 0 : codeIsolation
            interference += pow(10, (heard.level - isolation) / 10)
        }
        guard interference > 0 else { return false }
        return link(wanted.transmitter, receiver).level - 10 * log10(interference) < captureMargin
    }
}
