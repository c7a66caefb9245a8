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

/// Where the UWB board is.
enum UWBEndpoint: ExpressibleByArgument, Equatable {
    case tcp(host: String, port: UInt16)
    case usb(selector: String?)
    case tty(path: String)

    init?(argument: String) {
        if argument.hasPrefix("tcp:") {
            let rest = argument.dropFirst(4)
            guard let colon = rest.lastIndex(of: ":"), let port = UInt16(rest[rest.index(after: colon)...]),
                colon != rest.startIndex
            else { return nil }
            self = .tcp(host: String(rest[..<colon]), port: port)
        } else if argument == "usb" {
            self = .usb(selector: nil)
        } else if argument.hasPrefix("usb:"), argument.count > 4 {
            self = .usb(selector: String(argument.dropFirst(4)))
        } else if argument.hasPrefix("/") {
            self = .tty(path: argument)
        } else {
            return nil
        }
    }

    static var defaultValueDescription: String { "tcp:HOST:PORT | usb | usb:BUS-PORT | usb:SERIAL | /dev/ttyACMn" }
}
