import ByteCoding

/// The server side of the Attribute Protocol over one connection, as a pure state machine: a
/// client's PDU in, the PDUs to send and what the client did out (`ATTServerAction`); no I/O,
/// no clock. It serves the discovery, read and write subset GATT's procedures use (Core
/// Specification Vol 3 Part G §4) over a `GATTDatabase`, and answers everything else as Part F
/// §3.4 says: an Error Response for a request (Request Not Supported for one it does not
/// serve), nothing for a command, a response or a notification. State is a few values per
/// characteristic, bounded by the database: any byte sequence costs at most one response.
///
/// The kernel-socket backend (`ATTChannel`) runs one per LE ATT channel (CID 4); a backend that
/// sends indications owns the ATT transaction timeout (30 s, §3.3.3). Where bluetoothd serves
/// ATT, a D-Bus backend uses the database alone.
package struct ATTServer: Sendable {
    /// ATT_MTU before an exchange on LE (Vol 3 Part F §3.2.8).
    package static let defaultMTU = 23
    /// The largest useful ATT_MTU: a 512-octet value (the longest ATT carries, §3.2.9) after
    /// the longest header that carries one (a Prepare Write's 5 octets).
    package static let maximumMTU = 517

    package let database: GATTDatabase
    /// The Server Rx MTU this server announces, 23...517.
    package let serverMTU: Int
    /// ATT_MTU: 23 until the client's Exchange MTU Request, then the smaller Rx MTU.
    package private(set) var mtu = ATTServer.defaultMTU
    /// Whether the link is encrypted, as the backend learns it from the kernel (BT_SECURITY) or
    /// bluetoothd; characteristics that need it are refused until then.
    package var linkEncrypted = false

    private var exchangedMTU = false
    /// Per characteristic (index into `database.characteristics`): its value as last written.
    private var values: [[UInt8]]
    /// Per characteristic: the client's 0x2902 value.
    private var configurations: [GATTClientConfiguration]
    /// The characteristic whose indication awaits the client's confirmation.
    private var pendingIndication: Int?

    package init(database: GATTDatabase, serverMTU: Int = ATTServer.maximumMTU) {
        self.database = database
        self.serverMTU = min(max(serverMTU, Self.defaultMTU), Self.maximumMTU)
        values = database.characteristics.map(\.definition.value)
        configurations = Array(repeating: [], count: database.characteristics.count)
    }

    /// The client's subscription to `characteristic` (none for an unknown one).
    package func configuration(of characteristic: GATTUUID) -> GATTClientConfiguration {
        guard let index = index(of: characteristic) else { return [] }
        return configurations[index]
    }

    /// One PDU from the client; what to send and what the client did, in order.
    package mutating func handle(_ pdu: [UInt8]) -> [ATTServerAction] {
        guard let opcode = pdu.first else { return [] }
        if ATTOpcode.isCommand(opcode) {
            // §3.3: an unsupported command is ignored; so is a malformed or refused one,
            // since a command never gets a response (§3.3.1).
            return opcode == ATTOpcode.writeCommand.rawValue ? writeCommand(pdu) : []
        }
        if opcode == ATTOpcode.handleValueConfirmation.rawValue { return confirmation(pdu) }
        if ATTOpcode.isServerToClient(opcode) { return [] }
        // A client may not send more than ATT_MTU octets (§3.2.8); nor does the server read them.
        guard pdu.count <= mtu else { return error(opcode, 0, .invalidPDU) }
        switch ATTOpcode(rawValue: opcode) {
        case .exchangeMTURequest: return exchangeMTU(pdu)
        case .findInformationRequest: return findInformation(pdu)
        case .findByTypeValueRequest: return findByTypeValue(pdu)
        case .readByTypeRequest: return readByType(pdu)
        case .readRequest: return read(pdu)
        case .readBlobRequest: return readBlob(pdu)
        case .readByGroupTypeRequest: return readByGroupType(pdu)
        case .writeRequest: return writeRequest(pdu)
        default: return error(opcode, 0, .requestNotSupported)
        }
    }

    /// A Handle Value Notification (§3.4.7.1) carrying `value` on `characteristic`, for a client
    /// that subscribed; thrown otherwise, and for a value longer than ATT_MTU − 3.
    package func notification(_ characteristic: GATTUUID, value: [UInt8]) throws(ATTNotificationError) -> [UInt8] {
        let handle = try updateHandle(characteristic, value: value, property: .notify, subscription: .notifications)
        return Self.pdu(.handleValueNotification, handle) + value
    }

    /// A Handle Value Indication (§3.4.7.2); one at a time: the next waits for the client's
    /// confirmation (`.indicationConfirmed`).
    package mutating func indication(_ characteristic: GATTUUID, value: [UInt8]) throws(ATTNotificationError) -> [UInt8] {
        let handle = try updateHandle(characteristic, value: value, property: .indicate, subscription: .indications)
        guard pendingIndication == nil else { throw .indicationPending(characteristic) }
        pendingIndication = index(of: characteristic)
        return Self.pdu(.handleValueIndication, handle) + value
    }

    private func updateHandle(
        _ uuid: GATTUUID, value: [UInt8], property: GATTCharacteristicProperties, subscription: GATTClientConfiguration
    ) throws(ATTNotificationError) -> UInt16 {
        guard let index = index(of: uuid) else { throw .unknownCharacteristic(uuid) }
        let characteristic = database.characteristics[index]
        guard characteristic.definition.properties.contains(property) else { throw .notPermitted(uuid) }
        guard configurations[index].contains(subscription) else { throw .notSubscribed(uuid) }
        guard value.count <= mtu - 3 else { throw .tooLong(uuid, length: value.count, maximum: mtu - 3) }
        return characteristic.valueHandle
    }

    private func index(of uuid: GATTUUID) -> Int? {
        database.characteristics.firstIndex { $0.uuid == uuid }
    }

    // MARK: Requests

    /// §3.4.2.1: ATT_MTU becomes the smaller Rx MTU, never below 23, once per connection (the
    /// client may send it only once; a repeat is answered and changes nothing).
    private mutating func exchangeMTU(_ pdu: [UInt8]) -> [ATTServerAction] {
        guard pdu.count == 3 else { return error(pdu[0], 0, .invalidPDU) }
        let clientMTU = Int(Self.u16(pdu, 1))
        let response = ATTServerAction.send(Self.pdu(.exchangeMTUResponse, UInt16(serverMTU)))
        if !exchangedMTU {
            exchangedMTU = true
            if clientMTU >= Self.defaultMTU { mtu = min(clientMTU, serverMTU) }
        }
        return [response]
    }

    /// §3.4.3.1: handle–type pairs, all with 16-bit types (format 1) or all 128-bit (format 2),
    /// as many as ATT_MTU holds.
    private func findInformation(_ pdu: [UInt8]) -> [ATTServerAction] {
        guard pdu.count == 5 else { return error(pdu[0], 0, .invalidPDU) }
        let (start, end) = (Self.u16(pdu, 1), Self.u16(pdu, 3))
        guard start != 0, start <= end else { return error(pdu[0], start, .invalidHandle) }
        var response: [UInt8] = [ATTOpcode.findInformationResponse.rawValue, 0]
        var typeLength = 0
        for attribute in database.attributes(from: start, through: end) {
            let type = attribute.type.littleEndian
            if typeLength == 0 { typeLength = type.count }
            guard type.count == typeLength, response.count + 2 + type.count <= mtu else { break }
            response.appendLE(attribute.handle)
            response += type
        }
        guard typeLength > 0 else { return error(pdu[0], start, .attributeNotFound) }
        response[1] = typeLength == 2 ? 0x01 : 0x02
        return [.send(response)]
    }

    /// §3.4.3.3: the handles (and group ends) of the attributes with a 16-bit type and a value
    /// (GATT's Discover Primary Service by Service UUID, Part G §4.4.2).
    private func findByTypeValue(_ pdu: [UInt8]) -> [ATTServerAction] {
        guard pdu.count >= 7 else { return error(pdu[0], 0, .invalidPDU) }
        let (start, end) = (Self.u16(pdu, 1), Self.u16(pdu, 3))
        guard start != 0, start <= end else { return error(pdu[0], start, .invalidHandle) }
        let type = GATTUUID(Self.u16(pdu, 5))
        let wanted = Array(pdu[7...])
        var response: [UInt8] = [ATTOpcode.findByTypeValueResponse.rawValue]
        for attribute in database.attributes(from: start, through: end)
        where attribute.type == type && readPermission(attribute) == nil && currentValue(attribute) == wanted {
            guard response.count + 4 <= mtu else { break }
            response.appendLE(attribute.handle)
            response.appendLE(attribute.groupEndHandle)
        }
        guard response.count > 1 else { return error(pdu[0], start, .attributeNotFound) }
        return [.send(response)]
    }

    /// §3.4.4.1: handle–value pairs of one type (GATT's characteristic discovery reads 0x2803),
    /// all values of one length, each cut to min(ATT_MTU − 4, 253). An attribute that may not be
    /// read ends the list; as the first, it is the error.
    private func readByType(_ pdu: [UInt8]) -> [ATTServerAction] {
        guard pdu.count == 7 || pdu.count == 21, let type = GATTUUID(littleEndian: pdu[5...]) else {
            return error(pdu[0], 0, .invalidPDU)
        }
        let (start, end) = (Self.u16(pdu, 1), Self.u16(pdu, 3))
        guard start != 0, start <= end else { return error(pdu[0], start, .invalidHandle) }
        var response: [UInt8] = [ATTOpcode.readByTypeResponse.rawValue, 0]
        var valueLength: Int?
        for attribute in database.attributes(from: start, through: end) where attribute.type == type {
            if let refusal = readPermission(attribute) {
                if valueLength == nil { return error(pdu[0], attribute.handle, refusal) }
                break
            }
            let value = currentValue(attribute).prefix(min(mtu - 4, 253))
            if valueLength == nil { valueLength = value.count }
            guard value.count == valueLength, response.count + 2 + value.count <= mtu else { break }
            response.appendLE(attribute.handle)
            response += value
        }
        guard let valueLength else { return error(pdu[0], start, .attributeNotFound) }
        response[1] = UInt8(2 + valueLength)
        return [.send(response)]
    }

    /// §3.4.4.3: one attribute's value, cut to ATT_MTU − 1.
    private func read(_ pdu: [UInt8]) -> [ATTServerAction] {
        guard pdu.count == 3 else { return error(pdu[0], 0, .invalidPDU) }
        let handle = Self.u16(pdu, 1)
        guard let attribute = database.attribute(handle) else { return error(pdu[0], handle, .invalidHandle) }
        if let refusal = readPermission(attribute) { return error(pdu[0], handle, refusal) }
        return [.send([ATTOpcode.readResponse.rawValue] + currentValue(attribute).prefix(mtu - 1))]
    }

    /// §3.4.4.5: part of a value from an offset. Invalid Offset past its end; Attribute Not
    /// Long for a fixed-length attribute (a declaration, a 0x2902) that one Read returns whole.
    private func readBlob(_ pdu: [UInt8]) -> [ATTServerAction] {
        guard pdu.count == 5 else { return error(pdu[0], 0, .invalidPDU) }
        let (handle, offset) = (Self.u16(pdu, 1), Int(Self.u16(pdu, 3)))
        guard let attribute = database.attribute(handle) else { return error(pdu[0], handle, .invalidHandle) }
        if let refusal = readPermission(attribute) { return error(pdu[0], handle, refusal) }
        let value = currentValue(attribute)
        guard offset <= value.count else { return error(pdu[0], handle, .invalidOffset) }
        if !attribute.hasVariableLength, value.count <= mtu - 3 { return error(pdu[0], handle, .attributeNotLong) }
        return [.send([ATTOpcode.readBlobResponse.rawValue] + value[offset...].prefix(mtu - 1))]
    }

    /// §3.4.4.9: the services in a range with their end handles (GATT's Discover All Primary
    /// Services, Part G §4.4.1); values of one length, each cut to min(ATT_MTU − 6, 251). Only
    /// 0x2800 and 0x2801 are grouping types (Part G §2.5.3); there are no secondary services.
    private func readByGroupType(_ pdu: [UInt8]) -> [ATTServerAction] {
        guard pdu.count == 7 || pdu.count == 21, let type = GATTUUID(littleEndian: pdu[5...]) else {
            return error(pdu[0], 0, .invalidPDU)
        }
        let (start, end) = (Self.u16(pdu, 1), Self.u16(pdu, 3))
        guard start != 0, start <= end else { return error(pdu[0], start, .invalidHandle) }
        guard type == .primaryService || type == .secondaryService else { return error(pdu[0], start, .unsupportedGroupType) }
        var response: [UInt8] = [ATTOpcode.readByGroupTypeResponse.rawValue, 0]
        var valueLength: Int?
        for attribute in database.attributes(from: start, through: end) where attribute.type == type {
            let value = attribute.value.prefix(min(mtu - 6, 251))
            if valueLength == nil { valueLength = value.count }
            guard value.count == valueLength, response.count + 4 + value.count <= mtu else { break }
            response.appendLE(attribute.handle)
            response.appendLE(attribute.groupEndHandle)
            response += value
        }
        guard let valueLength else { return error(pdu[0], start, .attributeNotFound) }
        response[1] = UInt8(4 + valueLength)
        return [.send(response)]
    }

    /// §3.4.5.1: a characteristic value the client may write (its `write` property), or its
    /// 0x2902 descriptor (two octets, only the bits its properties allow).
    private mutating func writeRequest(_ pdu: [UInt8]) -> [ATTServerAction] {
        guard pdu.count >= 3 else { return error(pdu[0], 0, .invalidPDU) }
        let handle = Self.u16(pdu, 1)
        let value = Array(pdu[3...])
        guard let attribute = database.attribute(handle) else { return error(pdu[0], handle, .invalidHandle) }
        let response = ATTServerAction.send([ATTOpcode.writeResponse.rawValue])
        switch attribute.kind {
        case .characteristicValue(let index):
            if let refusal = writeRefusal(index, value, property: .write) { return error(pdu[0], handle, refusal) }
            values[index] = value
            let characteristic = database.characteristics[index]
            return [response, .write(characteristic: characteristic.uuid, valueHandle: handle, value: value, withResponse: true)]
        case .clientConfiguration(let index):
            guard value.count == 2 else { return error(pdu[0], handle, .invalidAttributeValueLength) }
            let characteristic = database.characteristics[index]
            var allowed: GATTClientConfiguration = []
            if characteristic.definition.properties.contains(.notify) { allowed.insert(.notifications) }
            if characteristic.definition.properties.contains(.indicate) { allowed.insert(.indications) }
            let configuration = GATTClientConfiguration(rawValue: Self.u16(pdu, 3))
            guard allowed.isSuperset(of: configuration) else { return error(pdu[0], handle, .valueNotAllowed) }
            guard configuration != configurations[index] else { return [response] }
            configurations[index] = configuration
            if !configuration.contains(.indications), pendingIndication == index { pendingIndication = nil }
            return [response, .subscription(characteristic: characteristic.uuid, configuration)]
        case .serviceDeclaration, .characteristicDeclaration:
            return error(pdu[0], handle, .writeNotPermitted)
        }
    }

    /// §3.4.5.3: as a Write Request to a characteristic with `writeWithoutResponse`, but never
    /// answered; anything the request would refuse is dropped.
    private mutating func writeCommand(_ pdu: [UInt8]) -> [ATTServerAction] {
        guard pdu.count >= 3, pdu.count <= mtu else { return [] }
        let handle = Self.u16(pdu, 1)
        let value = Array(pdu[3...])
        guard let attribute = database.attribute(handle), case .characteristicValue(let index) = attribute.kind,
            writeRefusal(index, value, property: .writeWithoutResponse) == nil
        else { return [] }
        values[index] = value
        return [.write(characteristic: database.characteristics[index].uuid, valueHandle: handle, value: value, withResponse: false)]
    }

    /// §3.4.7.3: the confirmation of the outstanding indication; one without is ignored.
    private mutating func confirmation(_ pdu: [UInt8]) -> [ATTServerAction] {
        guard pdu.count == 1, let index = pendingIndication else { return [] }
        pendingIndication = nil
        return [.indicationConfirmed(characteristic: database.characteristics[index].uuid)]
    }

    // MARK: Permissions and values

    /// Why `attribute` may not be read, or nil. Declarations and 0x2902 descriptors are always
    /// readable (Part G §3.1, §3.3.1, §3.3.3.3).
    private func readPermission(_ attribute: GATTAttribute) -> ATTErrorCode? {
        guard case .characteristicValue(let index) = attribute.kind else { return nil }
        let definition = database.characteristics[index].definition
        guard definition.properties.contains(.read) else { return .readNotPermitted }
        // As BlueZ's gatt-server answers an encrypt-read attribute on an unencrypted link.
        if definition.readRequiresEncryption, !linkEncrypted { return .insufficientEncryption }
        return nil
    }

    private func writeRefusal(_ index: Int, _ value: [UInt8], property: GATTCharacteristicProperties) -> ATTErrorCode? {
        let definition = database.characteristics[index].definition
        guard definition.properties.contains(property) else { return .writeNotPermitted }
        guard value.count <= definition.maximumLength else { return .invalidAttributeValueLength }
        return nil
    }

    private func currentValue(_ attribute: GATTAttribute) -> [UInt8] {
        switch attribute.kind {
        case .characteristicValue(let index): values[index]
        case .clientConfiguration(let index): Self.le(configurations[index].rawValue)
        case .serviceDeclaration, .characteristicDeclaration: attribute.value
        }
    }

    // MARK: Octets

    /// §3.4.1.1: the request's opcode, the handle in error, the code.
    private func error(_ request: UInt8, _ handle: UInt16, _ code: ATTErrorCode) -> [ATTServerAction] {
        [.send([ATTOpcode.errorResponse.rawValue, request] + Self.le(handle) + [code.rawValue])]
    }

    private static func pdu(_ opcode: ATTOpcode, _ parameter: UInt16) -> [UInt8] {
        [opcode.rawValue] + le(parameter)
    }

    private static func le(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }

    private static func u16(_ pdu: [UInt8], _ offset: Int) -> UInt16 {
        UInt16(pdu[offset]) | UInt16(pdu[offset + 1]) << 8
    }
}
