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
        /// Line-of-sight readings the step wants, and the step's wait, resumed when it has them.
        var wanted = 0
        var waiter: CheckedContinuation<Void, Never>?
        /// The step's time ran out before `waitForStep` began to wait.
        var timedOut = false
        var board: String?
        var peer: String?
    }

    private let state = Mutex(State())
    func receive(_ events: [Event], timestampMilliseconds: Int64) {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { s in
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
            return Self.lineOfSightCount(s) >= s.wanted ? s.waiter.take() : nil
        }
        waiter?.resume()
    }

    /// Starts a step that wants `lineOfSight` line-of-sight readings.
    func start(lineOfSight wanted: Int) {
        state.withLock { s in
            s.collecting = true
            s.wanted = wanted
            s.timedOut = false
        }
    }

    /// Returns once the step has its readings or `timeout` passed; `stop()` then hands them over.
    func waitForStep(within timeout: Duration) async {
        // The step's time limit is a deadline, not a poll: it only ends a step that lacks readings.
        let deadline = Task {
            try await Task.sleep(for: timeout)
            let waiter = state.withLock { s in
                s.timedOut = true
                return s.waiter.take()
            }
            waiter?.resume()
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let enough = state.withLock { s in
                guard !s.timedOut, Self.lineOfSightCount(s) < s.wanted else { return true }
                s.waiter = done
                return false
            }
            if enough { done.resume() }
        }
        deadline.cancel()
    }

    /// Ends the step and hands over its readings.
    func stop() -> [Calibration.Reading] {
        state.withLock { s in
            s.collecting = false
            defer { s.readings = [] }
            return s.readings
        }
    }

    private static func lineOfSightCount(_ s: State) -> Int { s.readings.filter { !$0.nonLineOfSight }.count }
    var board: String? { state.withLock { $0.board } }
    var peer: String? { state.withLock { $0.peer } }

    func drain() -> DrainResult { DrainResult() }
}
