import Foundation
import BLE
import PeerProtocol
import Testing

@testable import BlueZMgmt

/// Byte vectors from BlueZ's own management tester (bluez/bluez tools/mgmt-tester.c), the
/// suite that checks the kernel's mgmt implementation: an independent source for our layouts.
@Suite struct MgmtCodecTests {
    let heartRateAdvert: [UInt8] = [0x03, 0x02, 0x0D, 0x18, 0x04, 0xFF, 0x01, 0x02, 0x03]

    /// mgmt-tester.c: add_advertising_param_uuid, _scanrsp, _connectable, _general_discov.
    @Test func addAdvertisingParametersMatchMgmtTester() {
        #expect(
            MgmtCommand.addAdvertising(instance: 1, flags: [], duration: 0, timeout: 0, data: heartRateAdvert, scanResponse: []).parameters
                == [0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, 0x00] + heartRateAdvert)
        let scanResponse: [UInt8] = [0x03, 0x19, 0x40, 0x03, 0x05, 0x03, 0x0D, 0x18, 0x0F, 0x18]
        #expect(
            MgmtCommand.addAdvertising(instance: 1, flags: [], duration: 0, timeout: 0, data: heartRateAdvert, scanResponse: scanResponse)
                .parameters == [0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, 0x0A] + heartRateAdvert + scanResponse)
        #expect(
            MgmtCommand.addAdvertising(instance: 1, flags: .connectable, duration: 0, timeout: 0, data: heartRateAdvert, scanResponse: [])
                .parameters.prefix(5) == [0x01, 0x01, 0x00, 0x00, 0x00])
        #expect(
            MgmtCommand.addAdvertising(instance: 1, flags: .discoverable, duration: 0, timeout: 5, data: heartRateAdvert, scanResponse: [])
                .parameters.prefix(9) == [0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00])
    }

    /// mgmt-tester.c: set_powered_on_param, set_le_on_param, start_discovery_le_param,
    /// remove_advertising_param_1; header layout from doc/mgmt-protocol.rst.
    @Test func simpleCommands() {
        #expect(MgmtCommand.setPowered(true).parameters == [0x01])
        #expect(MgmtCommand.setLowEnergy(true).parameters == [0x01])
        #expect(MgmtCommand.startDiscovery(addressTypes: 0x06).parameters == [0x06])
        #expect(MgmtCommand.removeAdvertising(instance: 1).parameters == [0x01])
        #expect(MgmtCommand.readControllerIndexList.packet(index: MgmtPacket.noController).encoded() == [0x03, 0x00, 0xFF, 0xFF, 0x00, 0x00])
        #expect(MgmtCommand.setPowered(true).packet(index: 1).encoded() == [0x05, 0x00, 0x01, 0x00, 0x01, 0x00, 0x01])
        #expect(MgmtCommand.addAdvertising(instance: 1, flags: [], duration: 0, timeout: 0, data: [], scanResponse: []).opcode == 0x003E)
    }

    /// mgmt-tester.c: set_privacy_1_valid_param and set_privacy_settings_param (privacy is
    /// bit 13 of the settings); opcode 0x002F and the 17-byte layout from lib/mgmt.h
    /// (0x0033 is Add Device: the VM rig's kernel answered Invalid Parameters to that mistake).
    @Test func setPrivacy() {
        let key: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08]
        let command = MgmtCommand.setPrivacy(mode: 1, identityResolvingKey: key)
        // The key goes least significant octet first.
        #expect(command.parameters == [0x01] + key.reversed())
        #expect(command.packet(index: 0).encoded() == [0x2F, 0x00, 0x00, 0x00, 0x11, 0x00] + [0x01] + key.reversed())
        #expect(ControllerSettings(rawValue: 0x0000_2080).contains(.privacy) && ControllerSettings(rawValue: 0x80) != .privacy)
    }

    /// mgmt-tester.c: read_adv_features_rsp_1 and _rsp_2.
    @Test func readAdvertisingFeaturesReplies() throws {
        let one = try AdvertisingFeatures(returnParameters: [0x7F, 0xF0, 0x01, 0x00, 0x1F, 0x1F, 0x05, 0x00])
        #expect(one.supportedFlags.rawValue == 0x0001_F07F)
        #expect(one.maxDataLength == 31 && one.maxScanResponseLength == 31 && one.maxInstances == 5 && one.instances.isEmpty)
        let two = try AdvertisingFeatures(returnParameters: [0x7F, 0xF0, 0x01, 0x00, 0x1F, 0x1F, 0x05, 0x01, 0x01])
        #expect(two.instances == [1])
        #expect(throws: MgmtError.truncated(what: "advertising features instances", needed: 2, available: 1)) {
            try AdvertisingFeatures(returnParameters: [0x7F, 0xF0, 0x01, 0x00, 0x1F, 0x1F, 0x05, 0x02, 0x01])
        }
    }

    /// mgmt-tester.c: ext_adv_params_valid (instance 1, intervals and TX power set: flags
    /// 0xC000, 100 ms, no TX power preference), ext_adv_params_mgmt_rsp_valid_50 (the 5.0
    /// controller's grant: TX power 0, 31 octets each) and ext_adv_data_valid.
    @Test func extendedAdvertisingMatchesMgmtTester() throws {
        let parameters = MgmtCommand.addExtendedAdvertisingParameters(
            instance: 1, flags: [.parameterIntervals, .parameterTxPower], duration: 0, timeout: 0, minInterval: 0xA0,
            maxInterval: 0xA0, txPower: 127)
        #expect(parameters.parameters == [0x01, 0x00, 0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xA0, 0x00, 0x00, 0x00, 0xA0, 0x00, 0x00, 0x00, 0x7F])
        #expect(parameters.opcode == 0x0054)
        let grant = try ExtendedAdvertisingGrant(returnParameters: [0x01, 0x00, 0x1F, 0x1F])
        #expect(grant == ExtendedAdvertisingGrant(instance: 1, txPower: 0, maxDataLength: 31, maxScanResponseLength: 31))
        #expect(try ExtendedAdvertisingGrant(returnParameters: [0x01, 0xF8, 0x1F, 0x1F]).txPower == -8)
        let data = MgmtCommand.addExtendedAdvertisingData(
            instance: 1, data: [0x03, 0x19, 0x01, 0x23], scanResponse: [0x05, 0x08] + Array("test".utf8))
        #expect(data.parameters == [0x01, 0x04, 0x06, 0x03, 0x19, 0x01, 0x23, 0x05, 0x08, 0x74, 0x65, 0x73, 0x74])
        #expect(data.opcode == 0x0055)
    }

    /// read_adv_features_rsp_1 comes from mgmt-tester's BT 4.x controller: interval and timeout
    /// parameters, no secondary PHY, so Add Advertising; a BT 5 controller adds the secondary
    /// PHYs (bits 7-9) and TX power (bit 10).
    @Test func extendedAdvertisingOnlyWhereTheControllerHasIt() throws {
        #expect(try !AdvertisingFeatures(returnParameters: [0x7F, 0xF0, 0x01, 0x00, 0x1F, 0x1F, 0x05, 0x00]).offersExtendedAdvertising)
        #expect(try AdvertisingFeatures(returnParameters: [0xFF, 0xF7, 0x01, 0x00, 0x1F, 0x1F, 0x05, 0x00]).offersExtendedAdvertising)
        // An older kernel without Add Extended Advertising Parameters: Add Advertising.
        #expect(try !AdvertisingFeatures(returnParameters: [0xFF, 0x07, 0x00, 0x00, 0x1F, 0x1F, 0x05, 0x00]).offersExtendedAdvertising)
    }

    /// mgmt-tester.c: device_found_valid, the Device Found event (0x0012) for an LE public
    /// device AA:01:01:00:00:00 with RSSI 127 (unknown) and 21 bytes of advertising data.
    @Test func deviceFoundFromMgmtTester() throws {
        let parameters: [UInt8] = [
            0x00, 0x00, 0x01, 0x01, 0xAA, 0x00, 0x01, 0x7F, 0x00, 0x00, 0x00, 0x00, 0x15, 0x00, 0x02, 0x01, 0x06, 0x0D, 0xFF, 0x80,
            0x01, 0x02, 0x15, 0x12, 0x34, 0x80, 0x91, 0xD0, 0xF2, 0xBB, 0xC5, 0x03, 0x02, 0x0F, 0x18,
        ]
        let event = try MgmtEvent(MgmtPacket(datagram: [0x12, 0x00, 0x00, 0x00, UInt8(parameters.count), 0x00] + parameters))
        guard case .deviceFound(let found) = event else {
            Issue.record("not a Device Found event: \(event)")
            return
        }
        #expect(found.address == [0x00, 0x00, 0x01, 0x01, 0xAA, 0x00])
        #expect(found.addressType == .lePublic)
        #expect(found.rssi == 127)
        #expect(found.eir.count == 21 && found.eir.prefix(3) == [0x02, 0x01, 0x06])
        // A foreign advert (company 0x0180): ours is not in it, and finding that out is not an error.
        #expect(try Advertisement.find(in: found.eir) == nil)
    }

    @Test func repliesAndMalformedPackets() throws {
        let complete = try MgmtEvent(MgmtPacket(datagram: [0x01, 0x00, 0x00, 0x00, 0x07, 0x00, 0x05, 0x00, 0x00, 0x81, 0x02, 0x00, 0x00]))
        #expect(complete == .commandComplete(opcode: 0x0005, status: .success, returnParameters: [0x81, 0x02, 0x00, 0x00]))
        #expect(try MgmtEvent(MgmtPacket(datagram: [0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x23, 0x00, 0x0A])) == .commandStatus(opcode: 0x0023, status: .busy))
        #expect(try MgmtEvent(MgmtPacket(datagram: [0x13, 0x00, 0x00, 0x00, 0x02, 0x00, 0x06, 0x00])) == .discovering(addressTypes: 6, active: false))
        #expect(throws: MgmtError.lengthMismatch(what: "mgmt packet", declared: 5, actual: 2)) {
            try MgmtPacket(datagram: [0x01, 0x00, 0x00, 0x00, 0x05, 0x00, 0x01, 0x02])
        }
        #expect(throws: MgmtError.lengthMismatch(what: "event 0x13", declared: 2, actual: 3)) {
            try MgmtEvent(MgmtPacket(datagram: [0x13, 0x00, 0x00, 0x00, 0x03, 0x00, 0x06, 0x01, 0x00]))
        }
        #expect(MgmtStatus.permissionDenied.description == "Permission Denied")
    }

    @Test func randomDatagramsNeverCrashTheDecoder() {
        var state: UInt64 = 7
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        for _ in 0..<20_000 {
            var bytes = (0..<Int(next() % 40)).map { _ in UInt8(truncatingIfNeeded: next()) }
            if bytes.count >= 6, next() % 2 == 0 {
                bytes[0] = [0x01, 0x02, 0x12, 0x13, 0x2F][Int(next() % 5)]
                bytes[1] = 0
                bytes[4] = UInt8(bytes.count - 6)
                bytes[5] = 0
            }
            if let packet = try? MgmtPacket(datagram: bytes) {
                _ = try? MgmtEvent(packet)
                _ = try? ControllerInfo(returnParameters: packet.parameters)
                _ = try? AdvertisingFeatures(returnParameters: packet.parameters)
            }
        }
    }
}

import BLEBlueZ
