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

/// The radios of a rig as the command line names them.
enum RigRadios {
    /// Opens the UWB board (and says how to reopen it after a replug) and the Bluetooth adapter;
    /// a rig of a keyed event asks the adapter for resolvable private addresses made with its
    /// `identityResolvingKey`.
    static func open(uwb: UWBEndpoint, ble: BLEBackend, identityResolvingKey: [UInt8]? = nil, loop: EventLoop, logger: Logger) throws -> (
        any UCITransport, @Sendable () async throws -> any UCITransport, any BLEAdapter
    ) {
        let transport: any UCITransport
        let reconnect: @Sendable () async throws -> any UCITransport
        switch uwb {
        case .tcp(let host, let port):
            transport = try StreamConnection.connect(host: host, port: port, loop: loop)
            reconnect = { try StreamConnection.connect(host: host, port: port, loop: loop) }
        case .usb(let selector):
            let board = try USBBoards.select(selector, from: USBBoards.list())
            logger.notice("UWB board \(USBBoards.summary(board))")
            transport = try USBTransport.open(board)
            // After a replug the board may sit on another port: find it again by serial.
            let again = board.serial ?? board.location
            reconnect = { try await USBBoards.open(again) }
        case .tty(let path):
            transport = try StreamConnection.openTTY(path, loop: loop)
            reconnect = { try StreamConnection.openTTY(path, loop: loop) }
        }
        let adapter: any BLEAdapter
        switch ble {
        case .world(let host, let port, let body):
            adapter = try RemoteAirAdapter(host: host, port: port, body: body, identityResolvingKey: identityResolvingKey)
        case .bluez(let name):
            adapter = try BlueZAdapter(name: name, psm: BridgeConfig().psm, identityResolvingKey: identityResolvingKey, logger: logger)
        }
        return (transport, reconnect, adapter)
    }
}
