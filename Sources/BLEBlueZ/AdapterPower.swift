/// The adapter's powered setting as the rig last knew it, from two sources that can cross: New
/// Settings events (another program's changes; the kernel does not send them to the socket
/// whose command made the change) and the rig's own Read Controller Information.
///
/// The two arrive on one mgmt socket in the kernel's order, but a read's answer resumes the task
/// that asked for it later, while the reader thread goes straight on to handle the events behind
/// it. So an event can be handled after a read went out and before its answer is used: bluetoothd
/// powering the adapter on while the rig turned LE privacy on again (its start, a dual-mode
/// adapter's longer initialisation) made the rig adopt the read's "off", after the event's "on",
/// and wait for the power-on it had just seen: no advertising, no discovery, for good. A read
/// that an event overtook is stale; the event's word stands.
struct AdapterPower {
    /// Identifies a read by the events handled before it went out.
    struct Read {
        fileprivate let eventsBefore: UInt64
    }

    private(set) var powered = false
    private var events: UInt64 = 0

    /// A New Settings event; whether the adapter was powered before it.
    mutating func settingsChanged(powered: Bool) -> Bool {
        defer {
            self.powered = powered
            events &+= 1
        }
        return self.powered
    }

    /// The rig's own command left the adapter `powered`: no event tells this socket so.
    mutating func commanded(powered: Bool) {
        self.powered = powered
    }

    /// Call before sending Read Controller Information.
    func readSent() -> Read {
        Read(eventsBefore: events)
    }

    /// The read's answer, unless an event was handled after the read went out; the setting in
    /// force afterwards.
    mutating func answered(powered: Bool, to read: Read) -> Bool {
        if events == read.eventsBefore { self.powered = powered }
        return self.powered
    }
}
