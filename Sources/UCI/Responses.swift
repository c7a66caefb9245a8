/// UWBS-to-host responses to the commands in `UCICommand`.
package enum UCIResponse: Hashable, Sendable {
    case deviceReset(StatusCode)
    case deviceInfo(StatusCode, DeviceInfo)
    case capsInfo(StatusCode, [CapabilityTLV])
    /// The handle is present in UCI 2.0 (5-octet payload) and nil in 1.x (status only).
    case sessionInit(StatusCode, sessionHandle: UInt32?)
    case sessionDeinit(StatusCode)
    /// The list names the parameters the UWBS refused (empty on success).
    case setAppConfig(StatusCode, [AppConfigStatus])
    case getAppConfig(StatusCode, [AppConfigTLV])
    /// UCI 2.0 lists per-controlee results; the 1.x response is status only (an empty list).
    case updateControllerMulticastList(StatusCode, [ControleeStatus])
    case sessionStart(StatusCode)
    case sessionStop(StatusCode)
    case androidSetCountryCode(StatusCode)
    /// A response that carries only a status where the success layout has more fields
    /// (a failed GET_DEVICE_INFO, or a SYNTAX_ERROR reply to an unknown or vendor command).
    /// Decoded for any GID/OID whose payload is exactly 1 octet with status != OK, unless the
    /// known layout for that GID/OID is itself status only.
    case statusOnly(groupID: UInt8, opcodeID: UInt8, StatusCode)

    package var status: StatusCode {
        switch self {
        case let .deviceReset(status), let .deviceInfo(status, _), let .capsInfo(status, _),
            let .sessionInit(status, _), let .sessionDeinit(status), let .setAppConfig(status, _),
            let .getAppConfig(status, _), let .updateControllerMulticastList(status, _),
            let .sessionStart(status), let .sessionStop(status), let .androidSetCountryCode(status),
            let .statusOnly(_, _, status):
            status
        }
    }

    package var groupID: UInt8 { opcode.gid }
    package var opcodeID: UInt8 { opcode.oid }

    private var opcode: (gid: UInt8, oid: UInt8) {
        switch self {
        case .deviceReset: (0x0, 0x00)
        case .deviceInfo: (0x0, 0x02)
        case .capsInfo: (0x0, 0x03)
        case .sessionInit: (0x1, 0x00)
        case .sessionDeinit: (0x1, 0x01)
        case .setAppConfig: (0x1, 0x03)
        case .getAppConfig: (0x1, 0x04)
        case .updateControllerMulticastList: (0x1, 0x07)
        case .sessionStart: (0x2, 0x00)
        case .sessionStop: (0x2, 0x01)
        case .androidSetCountryCode: (GroupID.vendorAndroid.rawValue, 0x01)
        case let .statusOnly(gid, oid, _): (gid, oid)
        }
    }

    package var message: UCIMessage {
        var payload = [status.rawValue]
        switch self {
        case .deviceReset, .sessionDeinit, .sessionStart, .sessionStop, .androidSetCountryCode, .statusOnly:
            break
        case let .deviceInfo(_, info):
            payload += info.uciVersion.octets + info.macVersion.octets
            payload += info.phyVersion.octets + info.uciTestVersion.octets
            payload.append(count: info.vendorData.count, of: "vendor_spec_info")
            payload += info.vendorData
        case let .capsInfo(_, tlvs):
            payload.append(count: tlvs.count, of: "capability TLV list")
            for tlv in tlvs {
                payload.append(tlv.type)
                payload.append(count: tlv.value.count, of: "capability value")
                payload += tlv.value
            }
        case let .sessionInit(_, handle):
            if let handle { payload.appendLE(handle) }
        case let .setAppConfig(_, statuses):
            payload.append(count: statuses.count, of: "app config status list")
            for entry in statuses { payload += [entry.id.rawValue, entry.status.rawValue] }
        case let .getAppConfig(_, tlvs):
            payload += tlvs.encoded
        case let .updateControllerMulticastList(_, controlees):
            if !controlees.isEmpty {
                payload.append(count: controlees.count, of: "controlee status list")
                for entry in controlees {
                    payload.appendLE(entry.shortAddress)
                    payload.append(entry.status)
                }
            }
        }
        return UCIMessage(messageType: .response, groupID: groupID, opcodeID: opcodeID, payload: payload)
    }

    package init(_ message: UCIMessage) throws(UCIError) {
        guard message.messageType == .response else { throw .unexpectedMessageType(message.messageType) }
        let payload = message.payload
        let gid = message.groupID, oid = message.opcodeID
        switch (gid, oid) {
        case (0x0, 0x00):
            self = .deviceReset(try Self.statusAlone(payload, "CORE_DEVICE_RESET_RSP"))
            return
        case (0x1, 0x01):
            self = .sessionDeinit(try Self.statusAlone(payload, "SESSION_DEINIT_RSP"))
            return
        case (0x2, 0x00):
            self = .sessionStart(try Self.statusAlone(payload, "SESSION_START_RSP"))
            return
        case (0x2, 0x01):
            self = .sessionStop(try Self.statusAlone(payload, "SESSION_STOP_RSP"))
            return
        case (GroupID.vendorAndroid.rawValue, 0x01):
            self = .androidSetCountryCode(try Self.statusAlone(payload, "ANDROID_SET_COUNTRY_CODE_RSP"))
            return
        case (0x1, 0x00):
            var r = ByteReader(payload, context: "SESSION_INIT_RSP")
            let status = StatusCode(rawValue: try r.u8("status"))
            let handle: UInt32? = if r.remaining == 0 { nil } else { try r.u32("session_handle") }
            try r.finish()
            self = .sessionInit(status, sessionHandle: handle)
            return
        case (0x1, 0x07):
            var r = ByteReader(payload, context: "SESSION_UPDATE_CONTROLLER_MULTICAST_LIST_RSP")
            let status = StatusCode(rawValue: try r.u8("status"))
            var controlees: [ControleeStatus] = []
            if r.remaining > 0 {
                let count = Int(try r.u8("controlee count"))
                try r.expectRest(count: count, stride: 3, field: "controlee statuses")
                for _ in 0..<count {
                    controlees.append(ControleeStatus(shortAddress: try r.u16("mac_address"), status: try r.u8("status")))
                }
            }
            self = .updateControllerMulticastList(status, controlees)
            return
        default:
            break
        }
        // Every other layout has more than a status, so a lone non-OK status is a bare error reply.
        if payload.count == 1, payload[0] != StatusCode.ok.rawValue {
            self = .statusOnly(groupID: gid, opcodeID: oid, StatusCode(rawValue: payload[0]))
            return
        }
        switch (gid, oid) {
        case (0x0, 0x02):
            var r = ByteReader(payload, context: "CORE_GET_DEVICE_INFO_RSP")
            let status = StatusCode(rawValue: try r.u8("status"))
            let uci = UCIVersion(octets: try r.bytes(2, "uci_version"))
            let mac = UCIVersion(octets: try r.bytes(2, "mac_version"))
            let phy = UCIVersion(octets: try r.bytes(2, "phy_version"))
            let test = UCIVersion(octets: try r.bytes(2, "uci_test_version"))
            let vendorLength = Int(try r.u8("vendor_spec_info length"))
            try r.expectRest(count: vendorLength, stride: 1, field: "vendor_spec_info")
            self = .deviceInfo(status, DeviceInfo(
                uciVersion: uci, macVersion: mac, phyVersion: phy, uciTestVersion: test, vendorData: r.rest()))
        case (0x0, 0x03):
            var r = ByteReader(payload, context: "CORE_GET_CAPS_INFO_RSP")
            let status = StatusCode(rawValue: try r.u8("status"))
            let count = try r.u8("capability count")
            var tlvs: [CapabilityTLV] = []
            for _ in 0..<count {
                let type = try r.u8("capability type")
                let length = try r.u8("capability length")
                tlvs.append(CapabilityTLV(type: type, value: try r.bytes(Int(length), "capability value")))
            }
            try r.finish()
            self = .capsInfo(status, tlvs)
        case (0x1, 0x03):
            var r = ByteReader(payload, context: "SESSION_SET_APP_CONFIG_RSP")
            let status = StatusCode(rawValue: try r.u8("status"))
            let count = Int(try r.u8("app config status count"))
            try r.expectRest(count: count, stride: 2, field: "app config statuses")
            var statuses: [AppConfigStatus] = []
            for _ in 0..<count {
                statuses.append(AppConfigStatus(
                    id: AppConfigID(rawValue: try r.u8("app config id")), status: StatusCode(rawValue: try r.u8("status"))))
            }
            self = .setAppConfig(status, statuses)
        case (0x1, 0x04):
            var r = ByteReader(payload, context: "SESSION_GET_APP_CONFIG_RSP")
            let status = StatusCode(rawValue: try r.u8("status"))
            let tlvs = try [AppConfigTLV](from: &r)
            try r.finish()
            self = .getAppConfig(status, tlvs)
        default:
            throw .unknownOpcode(messageType: .response, groupID: gid, opcodeID: oid)
        }
    }

    private static func statusAlone(_ payload: [UInt8], _ name: String) throws(UCIError) -> StatusCode {
        var r = try ByteReader(payload, context: name, exactly: 1)
        return StatusCode(rawValue: try r.u8("status"))
    }
}
