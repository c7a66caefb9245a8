import ByteCoding

/// SESSION_UPDATE_CONTROLLER_MULTICAST_LIST_NTF: what became of each controlee of an update.
///
/// Two layouts: UCI 2.0 `token, n, [address(2), status]`; UCI 1.x `token, remaining list
/// size, n, [address(2), sub-session id(4), status]`. The decoder tells them apart by which one
/// the payload length fits (2.0 first); `remainingListSize` is set exactly for the 1.x layout.
package struct MulticastListUpdate: Hashable, Sendable {
    package var session: UInt32
    package var remainingListSize: UInt8?
    package var controlees: [ControleeStatus]

    package init(session: UInt32, remainingListSize: UInt8? = nil, controlees: [ControleeStatus]) {
        self.session = session
        self.remainingListSize = remainingListSize
        self.controlees = controlees
    }

    init(payload: [UInt8]) throws(UCIError) {
        let name = "SESSION_UPDATE_CONTROLLER_MULTICAST_LIST_NTF"
        var r = ByteReader(payload, context: name)
        session = try r.u32("session_token")
        let fitsVersion2 = payload.count >= 5 && payload.count == 5 + 3 * Int(payload[4])
        if !fitsVersion2 { remainingListSize = try r.u8("remaining_multicast_list_size") } else { remainingListSize = nil }
        let count = Int(try r.u8("controlee count"))
        let stride = fitsVersion2 ? 3 : 7
        try r.expectRest(count: count, stride: stride, field: "controlee statuses")
        controlees = []
        for _ in 0..<count {
            let address = try r.u16("mac_address")
            let subSession: UInt32? = fitsVersion2 ? nil : try r.u32("subsession_id")
            controlees.append(ControleeStatus(shortAddress: address, subSessionID: subSession, status: try r.u8("status")))
        }
    }

    var payload: [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendLE(session)
        if let remainingListSize { bytes.append(remainingListSize) }
        bytes.append(count: controlees.count, of: "controlee status list")
        for controlee in controlees {
            bytes.appendLE(controlee.shortAddress)
            if remainingListSize != nil { bytes.appendLE(controlee.subSessionID ?? 0) }
            bytes.append(controlee.status)
        }
        return bytes
    }
}
