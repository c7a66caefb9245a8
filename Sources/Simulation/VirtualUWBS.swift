import UCI

/// A virtual UWB subsystem: the device side of FiRa UCI, byte for byte. It answers the commands a
/// DS-TWR host sends, keeps session state like a board does (INIT -> IDLE once configured ->
/// ACTIVE -> IDLE -> DEINIT, each change notified), and speaks UCI 2.0 (session handles that
/// differ from session ids, so hosts must use the handle) or UCI 1.1 (`BoardUCI`). Ranging
/// results come from the `World`.
struct VirtualUWBS {
    struct Session {
        var id: UInt32
        var handle: UInt32
        var state: SessionState
        var config: [AppConfigID: [UInt8]] = [:] {
            didSet { airParameters = Self.airParameters(of: config) }
        }
        /// Everything both sides must share to hear each other, the round's shape included: kept
        /// as the config changes (at set-up), since the world compares it at every round.
        private(set) var airParameters = Self.airParameters(of: [:])
        var nextRoundMilliseconds: Int64 = 0
        var sequence: UInt32 = 0

        var isController: Bool { config[.deviceType] == [1] }
        var isOneToMany: Bool { config[.multiNodeMode] == [MultiNodeMode.oneToMany.rawValue] }
        var ownAddress: UInt16? { Self.shortAddress(config[.deviceMacAddress]) }
        var destinations: [UInt16] {
            guard let bytes = config[.dstMacAddress], bytes.count % 2 == 0 else { return [] }
            return stride(from: 0, to: bytes.count, by: 2).map { UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8 }
        }
        var intervalMilliseconds: Int64 {
            guard let b = config[.rangingDuration], b.count == 4 else { return 200 }
            return Int64(UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24)
        }
        private static func airParameters(of config: [AppConfigID: [UInt8]]) -> [[UInt8]?] {
            [
                config[.channelNumber], config[.preambleCodeIndex], config[.stsConfig], config[.vendorID], config[.staticSTSIV],
                config[.sessionKey], config[.multiNodeMode], config[.slotsPerRangingRound], hops(config) ? [1] : nil,
            ]
        }
        /// FiRa round hopping (HOPPING_MODE 1): each ranging block's round at another place in
        /// the block (`World.buildAir`).
        var hops: Bool { Self.hops(config) }
        private static func hops(_ config: [AppConfigID: [UInt8]]) -> Bool { config[.hoppingMode] == [1] }
        var isConfigured: Bool {
            config[.deviceType] != nil && config[.deviceRole] != nil && ownAddress != nil && !destinations.isEmpty
                && config[.channelNumber] != nil
        }

        private static func shortAddress(_ bytes: [UInt8]?) -> UInt16? {
            guard let bytes, bytes.count == 2 else { return nil }
            return UInt16(bytes[0]) | UInt16(bytes[1]) << 8
        }
    }

    /// Reported in GET_DEVICE_INFO vendor data so a host can tell the virtual board apart.
    let serial: UInt8
    private var decoder = UCIStreamDecoder()
    private(set) var sessions: [UInt32: Session] = [:]
    private var nextHandle: UInt32 = 1

    /// Sizes of the app config values we check; others are stored as given.
    private static let valueSizes: [AppConfigID: Set<Int>] = [
        .deviceType: [1], .deviceRole: [1], .rangingRoundUsage: [1], .stsConfig: [1], .multiNodeMode: [1],
        .channelNumber: [1], .numberOfControlees: [1], .deviceMacAddress: [2, 8], .slotDuration: [2],
        .rangingDuration: [4], .preambleCodeIndex: [1], .vendorID: [2], .staticSTSIV: [6], .macAddressMode: [1],
        .sessionKey: [16],  // SUPPORTED_SESSION_KEY_LENGTH: 128-bit only
    ]
    private static let validChannels: Set<UInt8> = [5, 6, 8, 9, 10, 12, 13, 14]
    /// Sessions it runs at once (reported in GET_CAPS_INFO): 8 unless the scenario says.
    static let defaultMaxSessions = 8
    /// Controlees one one-to-many session takes; more get MULTICAST_LIST_FULL.
    static let maxControlees = 8
    let maxSessions: Int
    let uci: BoardUCI
    /// false: the firmware ignores RSSI_REPORTING and sends the RSSI octet as 0 even on UCI 2.0
    /// (scenario node option `"rssi": false`), while its capabilities still read like any 2.0
    /// board's, so the host asks for RSSI and gets none.
    let honoursRSSIReporting: Bool

    init(serial: UInt8, maxSessions: Int = Self.defaultMaxSessions, uci: BoardUCI = .v2_0, honoursRSSIReporting: Bool = true) {
        self.serial = serial
        self.maxSessions = maxSessions
        self.uci = uci
        self.honoursRSSIReporting = honoursRSSIReporting
    }

    /// Consumes host bytes; returns the device's reply bytes (responses and the notifications
    /// they cause), in order.
    mutating func receive(_ bytes: [UInt8], now: Int64) -> [UInt8] {
        decoder.append(bytes)
        var out: [UInt8] = []
        while true {
            do {
                guard let message = try decoder.next() else { break }
                for reply in handle(message, now: now) { out += reply.encoded() }
            } catch {
                // A real UWBS drops what it cannot frame; so do we, and answer nothing.
                continue
            }
        }
        return out
    }

    private mutating func handle(_ message: UCIMessage, now: Int64) -> [UCIMessage] {
        let command: UCICommand
        do {
            command = try UCICommand(message)
        } catch .unknownOpcode(_, let gid, _) {
            let known = [GroupID.core, .sessionConfig, .sessionControl, .vendorAndroid].map(\.rawValue).contains(gid)
            return [Self.statusOnly(message, known ? .unknownOID : .unknownGID)]
        } catch {
            return [Self.statusOnly(message, .syntaxError)]
        }
        return execute(command, now: now).map(\.message)
    }

    private enum Reply {
        case response(UCIResponse)
        case notification(UCINotification)
        var message: UCIMessage {
            switch self {
            case .response(let r): r.message
            case .notification(let n): n.message
            }
        }
    }

    private mutating func execute(_ command: UCICommand, now: Int64) -> [Reply] {
        switch command {
        case .deviceReset:
            sessions = [:]
            return [.response(.deviceReset(.ok)), .notification(.deviceStatus(.ready))]
        case .androidSetCountryCode:
            return [.response(.androidSetCountryCode(.ok))]
        case .getDeviceInfo:
            // A UCI 1.1 board is a FiRa 1.1 PHY/MAC (Qorvo's UCI 1.1 firmware reports those);
            // a 2.0 one, FiRa 1.3.
            let fira = uci == .v1_1 ? UCIVersion(major: 1, minor: 1, maintenance: 0) : UCIVersion(major: 1, minor: 3, maintenance: 0)
            let info = DeviceInfo(
                uciVersion: uci == .v1_1 ? UCIVersion(major: 1, minor: 1, maintenance: 0) : UCIVersion(major: 2, minor: 0, maintenance: 0),
                macVersion: fira, phyVersion: fira,
                uciTestVersion: UCIVersion(major: 1, minor: 1, maintenance: 0),
                vendorData: Array("NBVW".utf8) + [serial])
            return [.response(.deviceInfo(.ok, info))]
        case .getCapsInfo:
            return [.response(.capsInfo(.ok, BoardCapabilities.dw3000(uci, maxSessions: maxSessions)))]
        case .sessionInit(let id, _):
            if sessions.values.contains(where: { $0.id == id }) { return [.response(.sessionInit(.sessionDuplicate, sessionHandle: nil))] }
            guard sessions.count < maxSessions else { return [.response(.sessionInit(.maxSessionsExceeded, sessionHandle: nil))] }
            // UCI 1.1 names a session by its id; 2.0 hands out a handle of its own.
            let handle = uci == .v1_1 ? id : nextHandle
            if uci == .v2_0 { nextHandle &+= 1 }
            sessions[handle] = Session(id: id, handle: handle, state: .initialized)
            return [
                .response(.sessionInit(.ok, sessionHandle: uci == .v1_1 ? nil : handle)),
                .notification(.sessionStatus(session: handle, state: .initialized, reason: .stateChangeWithSessionManagementCommands)),
            ]
        case .sessionDeinit(let handle):
            guard sessions.removeValue(forKey: handle) != nil else { return [.response(.sessionDeinit(.sessionNotExist))] }
            return [
                .response(.sessionDeinit(.ok)),
                .notification(.sessionStatus(session: handle, state: .deinitialized, reason: .stateChangeWithSessionManagementCommands)),
            ]
        case .setAppConfig(let handle, let tlvs):
            return setAppConfig(handle, tlvs)
        case .getAppConfig(let handle, let ids):
            guard let session = sessions[handle] else { return [.response(.getAppConfig(.sessionNotExist, []))] }
            let wanted = ids.isEmpty ? session.config.keys.sorted { $0.rawValue < $1.rawValue } : ids
            let found = wanted.compactMap { id in session.config[id].map { AppConfigTLV(id: id, value: $0) } }
            return [.response(.getAppConfig(found.count == wanted.count ? .ok : .invalidParam, found))]
        case .updateControllerMulticastList(let handle, let action, let controlees):
            return updateMulticastList(handle, action, controlees)
        case .sessionStart(let handle):
            guard let session = sessions[handle] else { return [.response(.sessionStart(.sessionNotExist))] }
            switch session.state {
            case .active: return [.response(.sessionStart(.sessionActive))]
            case .idle: break
            default: return [.response(.sessionStart(.sessionNotConfigured))]
            }
            sessions[handle]?.state = .active
            sessions[handle]?.nextRoundMilliseconds = now + session.intervalMilliseconds
            return [
                .response(.sessionStart(.ok)),
                .notification(.sessionStatus(session: handle, state: .active, reason: .stateChangeWithSessionManagementCommands)),
            ]
        case .sessionStop(let handle):
            guard let session = sessions[handle] else { return [.response(.sessionStop(.sessionNotExist))] }
            guard session.state == .active else { return [.response(.sessionStop(.rejected))] }
            sessions[handle]?.state = .idle
            return [
                .response(.sessionStop(.ok)),
                .notification(.sessionStatus(session: handle, state: .idle, reason: .stateChangeWithSessionManagementCommands)),
            ]
        }
    }

    private mutating func setAppConfig(_ handle: UInt32, _ tlvs: [AppConfigTLV]) -> [Reply] {
        guard var session = sessions[handle] else { return [.response(.setAppConfig(.sessionNotExist, []))] }
        guard session.state != .active else { return [.response(.setAppConfig(.sessionActive, []))] }
        var rejected: [AppConfigStatus] = []
        for tlv in tlvs {
            if let sizes = Self.valueSizes[tlv.id], !sizes.contains(tlv.value.count) {
                rejected.append(AppConfigStatus(id: tlv.id, status: .invalidParam))
            } else if tlv.id == .channelNumber, !Self.validChannels.contains(tlv.value.first ?? 0) {
                rejected.append(AppConfigStatus(id: tlv.id, status: .invalidRange))
            } else if tlv.id == .stsConfig, ![STSConfig.staticSTS.rawValue, STSConfig.provisioned.rawValue].contains(tlv.value.first ?? 0xFF) {
                rejected.append(AppConfigStatus(id: tlv.id, status: .invalidRange))  // the two its capabilities name
            } else {
                session.config[tlv.id] = tlv.value
            }
        }
        var replies: [Reply] = [.response(.setAppConfig(rejected.isEmpty ? .ok : .invalidParam, rejected))]
        if session.state == .initialized, session.isConfigured {
            session.state = .idle
            replies.append(.notification(.sessionStatus(session: handle, state: .idle, reason: .stateChangeWithSessionManagementCommands)))
        }
        sessions[handle] = session
        return replies
    }

    /// A one-to-many controller's list: adds or removes controlees, answering for each as a UCI 2.0
    /// board does (the response names the refused ones; the notification, every one) or a 1.1 one
    /// (the response is a status, OK once the command was taken; the notification names every
    /// controlee with its sub-session id and says how many more the list takes). A list emptied
    /// while ranging stops the session, as pica does.
    private mutating func updateMulticastList(_ handle: UInt32, _ action: MulticastAction, _ controlees: [Controlee]) -> [Reply] {
        guard var session = sessions[handle] else { return [.response(.updateControllerMulticastList(.sessionNotExist, []))] }
        guard session.isController, session.isOneToMany else {
            return [.response(.updateControllerMulticastList(.rejected, []))]
        }
        var addresses = session.destinations
        var statuses: [ControleeStatus] = []
        for controlee in controlees {
            let status: UInt8
            switch (action, addresses.firstIndex(of: controlee.shortAddress)) {
            case (.remove, let index?):
                addresses.remove(at: index)
                status = MulticastUpdateStatus.ok
            case (.remove, nil):
                status = MulticastUpdateStatus.addressNotFound
            case (_, _?):
                status = MulticastUpdateStatus.addressAlreadyPresent
            case (_, nil) where addresses.count >= Self.maxControlees:
                status = MulticastUpdateStatus.listFull
            case (_, nil):
                addresses.append(controlee.shortAddress)
                status = MulticastUpdateStatus.ok
            }
            statuses.append(ControleeStatus(shortAddress: controlee.shortAddress, status: status))
        }
        session.config[.dstMacAddress] = addresses.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        session.config[.numberOfControlees] = [UInt8(addresses.count)]
        let refused = statuses.filter { $0.status != MulticastUpdateStatus.ok }
        var replies: [Reply]
        switch uci {
        case .v2_0:
            replies = [
                .response(.updateControllerMulticastList(refused.isEmpty ? .ok : .failed, refused)),
                .notification(.multicastListUpdate(MulticastListUpdate(session: handle, controlees: statuses))),
            ]
        case .v1_1:
            // 1.1 has no ADDRESS_NOT_FOUND / ADDRESS_ALREADY_PRESENT: an unknown controlee is
            // SUB_SESSION_ID_NOT_FOUND, adding one twice changes nothing.
            let withSubSessions = zip(statuses, controlees).map { status, controlee in
                let code = switch status.status {
                case MulticastUpdateStatus.addressNotFound: MulticastUpdateStatus.subSessionIDNotFound
                case MulticastUpdateStatus.addressAlreadyPresent: MulticastUpdateStatus.ok
                default: status.status
                }
                return ControleeStatus(shortAddress: status.shortAddress, subSessionID: controlee.subSessionID, status: code)
            }
            let update = MulticastListUpdate(
                session: handle, remainingListSize: UInt8(Self.maxControlees - addresses.count), controlees: withSubSessions)
            replies = [.response(.updateControllerMulticastList(.ok, [])), .notification(.multicastListUpdate(update))]
        }
        if addresses.isEmpty, session.state == .active {
            session.state = .idle
            replies.append(.notification(.sessionStatus(session: handle, state: .idle, reason: .invalidNumberOfControlees)))
        }
        sessions[handle] = session
        return replies
    }

    /// Builds one SESSION_INFO_NTF for `handle`, one measurement per peer (a one-to-many
    /// controller's round has one per controlee), and advances its sequence number.
    mutating func rangeNotification(handle: UInt32, measurements: [TwoWayMeasurement]) -> [UInt8] {
        guard let session = sessions[handle] else { return [] }
        sessions[handle]?.sequence &+= 1
        // RSSI only when the host asked for it (RSSI_REPORTING 1) of a UCI 2.0 board whose
        // firmware honours the request; the field is 0 otherwise (RFU in UCI 1.1's measurement).
        let reportsRSSI = uci == .v2_0 && honoursRSSIReporting && session.config[.rssiReporting] == [1]
        let data = RangeData(
            sequenceNumber: session.sequence, session: handle, rcrIndicator: 0,
            rangingIntervalMilliseconds: UInt32(session.intervalMilliseconds), measurementType: .twoWay,
            macAddressMode: .short,
            measurements: reportsRSSI ? measurements : measurements.map { var m = $0; m.rssi = 0; return m }, vendorData: [])
        return UCINotification.rangeData(data).message.encoded()
    }

    mutating func scheduleNextRound(handle: UInt32, at time: Int64) {
        sessions[handle]?.nextRoundMilliseconds = time
    }

    private static func statusOnly(_ command: UCIMessage, _ status: StatusCode) -> UCIMessage {
        UCIResponse.statusOnly(groupID: command.groupID, opcodeID: command.opcodeID, status).message
    }
}
