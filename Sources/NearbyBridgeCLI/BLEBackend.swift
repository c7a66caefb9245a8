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

/// Which Bluetooth backend.
enum BLEBackend: ExpressibleByArgument, Equatable {
    case world(host: String, port: UInt16, body: String)
    case bluez(adapter: String)

    init?(argument: String) {
        if argument.hasPrefix("world:") {
            let rest = argument.dropFirst(6)
            guard let slash = rest.firstIndex(of: "/"), let colon = rest[..<slash].lastIndex(of: ":"),
                let port = UInt16(rest[rest.index(after: colon)..<slash]), rest.index(after: slash) < rest.endIndex
            else { return nil }
            self = .world(host: String(rest[..<colon]), port: port, body: String(rest[rest.index(after: slash)...]))
        } else if argument.hasPrefix("hci"), UInt16(argument.dropFirst(3)) != nil {
            self = .bluez(adapter: argument)
        } else {
            return nil
        }
    }
}
