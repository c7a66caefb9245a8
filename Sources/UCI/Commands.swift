/// Host-to-UWBS commands used for FiRa two-way ranging (uci.md §1.3).
///
/// Session commands take the session *token*: the session ID in UCI 1.x, the handle
/// returned by SESSION_INIT_RSP in UCI 2.0.
package enum UCICommand: Hashable, Sendable {
    /// `20 00 00 01 00`
    case deviceReset
    /// `20 02 00 00`
    case getDeviceInfo
    /// `20 03 00 00`
    case getCapsInfo
    case sessionInit(sessionID: UInt32, type: SessionType)
    case sessionDeinit(session: UInt32)
    case setAppConfig(session: UInt32, [AppConfigTLV])
    case getAppConfig(session: UInt32, [AppConfigID])
    /// Each controlee's key must have the size the action implies (0, 16 or 32 octets).
    case updateControllerMulticastList(session: UInt32, action: MulticastAction, [Controlee])
    case sessionStart(session: UInt32)
    case sessionStop(session: UInt32)
    /// ANDROID_SET_COUNTRY_CODE (vendor group 0xC, OID 0x01): the regulatory region as two
    /// ASCII letters (ISO 3166-1 alpha-2), e.g. `2C 01 00 02 44 45` for "DE". The UWBS may
    /// reset itself to apply it.
    case androidSetCountryCode(String)

    package var message: UCIMessage {
        var payload: [UInt8] = []
        let (gid, oid): (UInt8, UInt8)
        switch self {
        case .deviceReset:
            (gid, oid) = (0x0, 0x00)
            payload = [0x00]  // reset_config: UWBS reset
        case .getDeviceInfo:
            (gid, oid) = (0x0, 0x02)
        case .getCapsInfo:
            (gid, oid) = (0x0, 0x03)
        case let .sessionInit(sessionID, type):
            (gid, oid) = (0x1, 0x00)
            payload.appendLE(sessionID)
            payload.append(type.rawValue)
        case let .sessionDeinit(session):
            (gid, oid) = (0x1, 0x01)
            payload.appendLE(session)
        case let .setAppConfig(session, tlvs):
            (gid, oid) = (0x1, 0x03)
            payload.appendLE(session)
            payload.append(contentsOf: tlvs.encoded)
        case let .getAppConfig(session, ids):
            (gid, oid) = (0x1, 0x04)
            payload.appendLE(session)
            payload.append(count: ids.count, of: "app config ID list")
            payload.append(contentsOf: ids.map(\.rawValue))
        case let .updateControllerMulticastList(session, action, controlees):
            (gid, oid) = (0x1, 0x07)
            payload.appendLE(session)
            payload.append(action.rawValue)
            payload.append(count: controlees.count, of: "controlee list")
            for controlee in controlees {
                payload.appendLE(controlee.shortAddress)
                payload.appendLE(controlee.subSessionID)
                payload.append(contentsOf: controlee.subSessionKey)
            }
        case let .sessionStart(session):
            (gid, oid) = (0x2, 0x00)
            payload.appendLE(session)
        case let .sessionStop(session):
            (gid, oid) = (0x2, 0x01)
            payload.appendLE(session)
        case let .androidSetCountryCode(code):
            (gid, oid) = (GroupID.vendorAndroid.rawValue, 0x01)
            payload = Array(code.utf8.prefix(2))
        }
        return UCIMessage(messageType: .command, groupID: gid, opcodeID: oid, payload: payload)
    }

    /// Decodes a command, as the virtual UWBS receives it.
    package init(_ message: UCIMessage) throws(UCIError) {
        guard message.messageType == .command else { throw .unexpectedMessageType(message.messageType) }
        let payload = message.payload
        switch (message.groupID, message.opcodeID) {
        case (0x0, 0x00):
            var r = try ByteReader(payload, context: "CORE_DEVICE_RESET_CMD", exactly: 1)
            let config = try r.u8("reset_config")
            guard config == 0 else { throw .invalidValue(field: "reset_config", value: UInt64(config)) }
            self = .deviceReset
        case (0x0, 0x02):
            _ = try ByteReader(payload, context: "CORE_GET_DEVICE_INFO_CMD", exactly: 0)
            self = .getDeviceInfo
        case (0x0, 0x03):
            _ = try ByteReader(payload, context: "CORE_GET_CAPS_INFO_CMD", exactly: 0)
            self = .getCapsInfo
        case (0x1, 0x00):
            var r = try ByteReader(payload, context: "SESSION_INIT_CMD", exactly: 5)
            self = .sessionInit(sessionID: try r.u32("session_id"), type: SessionType(rawValue: try r.u8("session_type")))
        case (0x1, 0x01):
            var r = try ByteReader(payload, context: "SESSION_DEINIT_CMD", exactly: 4)
            self = .sessionDeinit(session: try r.u32("session_token"))
        case (0x1, 0x03):
            var r = ByteReader(payload, context: "SESSION_SET_APP_CONFIG_CMD")
            let session = try r.u32("session_token")
            let tlvs = try [AppConfigTLV](from: &r)
            try r.finish()
            self = .setAppConfig(session: session, tlvs)
        case (0x1, 0x04):
            var r = ByteReader(payload, context: "SESSION_GET_APP_CONFIG_CMD")
            let session = try r.u32("session_token")
            let count = Int(try r.u8("app config count"))
            try r.expectRest(count: count, stride: 1, field: "app config IDs")
            self = .getAppConfig(session: session, r.rest().map(AppConfigID.init(rawValue:)))
        case (0x1, 0x07):
            var r = ByteReader(payload, context: "SESSION_UPDATE_CONTROLLER_MULTICAST_LIST_CMD")
            let session = try r.u32("session_token")
            let rawAction = try r.u8("action")
            guard let action = MulticastAction(rawValue: rawAction) else {
                throw .invalidValue(field: "action", value: UInt64(rawAction))
            }
            let count = Int(try r.u8("controlee count"))
            try r.expectRest(count: count, stride: 6 + action.keySize, field: "controlees")
            var controlees: [Controlee] = []
            for _ in 0..<count {
                controlees.append(Controlee(
                    shortAddress: try r.u16("short_address"), subSessionID: try r.u32("subsession_id"),
                    subSessionKey: try r.bytes(action.keySize, "subsession_key")))
            }
            self = .updateControllerMulticastList(session: session, action: action, controlees)
        case (0x2, 0x00):
            var r = try ByteReader(payload, context: "SESSION_START_CMD", exactly: 4)
            self = .sessionStart(session: try r.u32("session_token"))
        case (0x2, 0x01):
            var r = try ByteReader(payload, context: "SESSION_STOP_CMD", exactly: 4)
            self = .sessionStop(session: try r.u32("session_token"))
        case (GroupID.vendorAndroid.rawValue, 0x01):
            var r = try ByteReader(payload, context: "ANDROID_SET_COUNTRY_CODE_CMD", exactly: 2)
            let code = try r.bytes(2, "country_code")
            guard code.allSatisfy({ (0x41...0x5A).contains($0) }) else {
                throw .invalidValue(field: "country_code", value: UInt64(code[0]) << 8 | UInt64(code[1]))
            }
            self = .androidSetCountryCode(String(decoding: code, as: UTF8.self))
        case let (gid, oid):
            throw .unknownOpcode(messageType: .command, groupID: gid, opcodeID: oid)
        }
    }
}
