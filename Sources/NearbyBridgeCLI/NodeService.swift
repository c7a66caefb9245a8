import ArgumentParser
import BLE
import BLEBlueZ
import Capture
import Bridge
import Foundation
import PeerProtocol
import PeerSecurity
import Logging
import MQTTOutput
import Replay
import ServiceLifecycle
import Simulation
import StreamIO
import UCIHost
import UCIUSB

/// A rig's node as a service: starts it (a radio that does not answer throws), runs it with a
/// clock tick every 200 ms, and on the group's graceful shutdown (SIGINT, SIGTERM, a failed
/// stdout) stops it: goodbye to every peer, their sessions deinitialised, advertising removed,
/// the board closed; `run` returns once that is done.
struct NodeService: Service {
    let node: BridgeNode
    let stop: StopRequest

    func run() async throws {
        try await node.start()
        await withTaskGroup(of: Void.self) { tasks in
            tasks.addTask { [node] in await NodeTicks.run(node) }
            tasks.addTask { [node, stop] in
                // A signal that came before the group could see it was still requested.
                if !stop.isRequested {
                    do { try await gracefulShutdown() } catch { return }  // cancelled: the node ended
                }
                stop.request()
                await node.stop()
            }
            await node.run()
            tasks.cancelAll()
        }
    }
}
