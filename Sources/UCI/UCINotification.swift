
/// UWBS-to-host notifications needed for ranging.
package enum UCINotification: Hashable, Sendable {
    /// `60 01 00 01 xx`
    case deviceStatus(DeviceState)
    /// `60 07 00 01 xx`
    case genericError(StatusCode)
    /// `61 02 00 06 ...`
    case sessionStatus(session: UInt32, state: SessionState, reason: ReasonCode)
    /// `61 07 ...`
    case multicastListUpdate(MulticastListUpdate)
    /// `62 00 ...`
    case rangeData(RangeData)

    package var message: UCIMessage {
        let (gid, oid): (UInt8, UInt8)
        var payload: [UInt8] = []
        switch self {
        case let .deviceStatus(state):
            (gid, oid) = (0x0, 0x01)
            payload = [state.rawValue]
        case let .genericError(status):
            (gid, oid) = (0x0, 0x07)
            payload = [status.rawValue]
        case let .sessionStatus(session, state, reason):
            (gid, oid) = (0x1, 0x02)
            payload.appendLE(session)
            payload += [state.rawValue, reason.rawValue]
        case let .multicastListUpdate(update):
            (gid, oid) = (0x1, 0x07)
            payload = update.payload
        case let .rangeData(data):
            (gid, oid) = (0x2, 0x00)
            payload = data.payload
        }
        return UCIMessage(messageType: .notification, groupID: gid, opcodeID: oid, payload: payload)
    }

    /// Non-TWR range data is rejected with `.invalidValue(field: "measurement_type", ...)`.
    package init(_ message: UCIMessage) throws(UCIError) {
        guard message.messageType == .notification else { throw .unexpectedMessageType(message.messageType) }
        let payload = message.payload
        switch (message.groupID, message.opcodeID) {
        case (0x0, 0x01):
            var r = try ByteReader(payload, context: "CORE_DEVICE_STATUS_NTF", exactly: 1)
            let raw = try r.u8("device_state")
            guard let state = DeviceState(rawValue: raw) else {
                throw .invalidValue(field: "device_state", value: UInt64(raw))
            }
            self = .deviceStatus(state)
        case (0x0, 0x07):
            var r = try ByteReader(payload, context: "CORE_GENERIC_ERROR_NTF", exactly: 1)
            self = .genericError(StatusCode(rawValue: try r.u8("status")))
        case (0x1, 0x02):
            var r = try ByteReader(payload, context: "SESSION_STATUS_NTF", exactly: 6)
            let session = try r.u32("session_token")
            let raw = try r.u8("session_state")
            guard let state = SessionState(rawValue: raw) else {
                throw .invalidValue(field: "session_state", value: UInt64(raw))
            }
            self = .sessionStatus(session: session, state: state, reason: ReasonCode(rawValue: try r.u8("reason_code")))
        case (0x1, 0x07):
            self = .multicastListUpdate(try MulticastListUpdate(payload: payload))
        case (0x2, 0x00):
            self = .rangeData(try RangeData(payload: payload))
        case let (gid, oid):
            throw .unknownOpcode(messageType: .notification, groupID: gid, opcodeID: oid)
        }
    }
}
