import ArgumentParser
import Bridge
import Events
import Foundation
import Logging
import PeerProtocol
import Proximity
import StreamIO
import Synchronization

/// Takes the node's events: which board it has, and, while a step collects, the first ranging
/// peer's readings with their RSSI.
final class CalibrationReadings: EventSink {
    private struct State {
        var collecting = false
        var readings: [Calibration.Reading] = []
        var board: String?
        var peer: String?
    }

    private let state = Mutex(State())
    func receive(_ events: [Event], timestampMilliseconds: Int64) {
        state.withLock { s in
            for event in events {
                switch event.body {
                case .device(let device) where device.radio == .uwb && device.state == .ready:
                    s.board = device.detail["board"]
                case .range(let range):
                    guard s.collecting, let distance = range.distance, s.peer == nil || s.peer == range.peer else { continue }
                    s.peer = range.peer
                    s.readings.append(Calibration.Reading(metres: distance, rssi: range.rssi, nonLineOfSight: range.nlos == true))
                default:
                    continue
                }
            }
        }
    }

    func start() { state.withLock { $0.collecting = true } }

    /// Ends the step and hands over its readings.
    func stop() -> [Calibration.Reading] {
        state.withLock { s in
            s.collecting = false
            defer { s.readings = [] }
            return s.readings
        }
    }

    var lineOfSightCount: Int { state.withLock { $0.readings.filter { !$0.nonLineOfSight }.count } }
    var board: String? { state.withLock { $0.board } }
    var peer: String? { state.withLock { $0.peer } }

    func drain() -> DrainResult { DrainResult() }
}
