import BLE
import Events
import GATTServer
import Glibc
import Synchronization
import UCIHost

/// One node's open capture files.
package struct NodeRecorder: Sendable {
    let uci: PcapWriter
    let hci: PcapWriter

    /// Wraps the node's UWB transport so its traffic is recorded; `clock` gives microseconds
    /// since the Unix epoch (virtual time in the simulation).
    package func wrap(uwb: any UCITransport, clock: @escaping @Sendable () -> Int64) -> any UCITransport {
        CapturingUCITransport(uwb, pcap: uci, clock: clock)
    }

    package func wrap(ble: any BLEAdapter, psm: UInt8, clock: @escaping @Sendable () -> Int64) -> any BLEAdapter {
        CapturingBLEAdapter(ble, pcap: hci, psm: psm, clock: clock)
    }

    /// Wraps the rig's GATT backend serving `database`: phones' ATT traffic goes in `ble.pcap`.
    package func wrap(gatt: any GATTBackend, database: GATTDatabase, clock: @escaping @Sendable () -> Int64) -> any GATTBackend {
        CapturingGATTBackend(gatt, database: database, pcap: hci, clock: clock)
    }
}
