#!/usr/bin/env python3
"""Checks a rig's capture of iPhones independently of nearby-bridge's Swift code: every shareable
configuration a phone wrote (an ATT Write Request whose value starts with 0x0B, in ble.pcap) is
read with Apple's layout, and the rig's board must have been given exactly the FiRa session
AOSP's mapping makes of it (uci.pcap): SESSION_INIT with the phone's session id, then one
SESSION_SET_APP_CONFIG for that session holding every TLV of the table below, value for value
(the dialect's report TLVs may follow).

    scripts/check-phone-capture.py RIG-DIR [--phones N] [--android N]

Exit 1, with one line per problem, when fewer than N blobs (default 1) are found or a session
does not match. The table follows AOSP's ranging test app (IosAccessoryRangingParameters:
CONFIG_UNICAST_DS_TWR; FiraOpenSessionParams' defaults) with the octet order of AOSP's code:
addresses as in the blobs, VENDOR_ID 4C 00. The rig's own short address comes from its 0x01
answer (accessory configuration data, +17 in its UWB configuration data).

Android phones (issue 31) are checked the same way with --android N (Ranging Configurations and
accepted Jetpack parameters together): every Ranging Configuration a phone wrote (a Write Request
whose value is version 1-3, id 0x02) is read with the layout of Google's PDL of the ranging OOB
spec (docs/PROTOCOL.md, "Phones — Android"), and the board must have been given the session
AOSP's ranging/uwb_backend ConfigurationManager and Utils open for config id 1, with DEVICE_TYPE
and DEVICE_ROLE from the configuration's mode and role. The rig's address comes from its
Capability Response (the UWB block's first two octets). Jetpack's parameters
(docs/android-jetpack.md) are read with the rig's "accepted" answer on the same connection,
which names the rig's address and the complex channel.
"""
import struct
import sys


def records(path, linktype):
    data = open(path, "rb").read()
    if struct.unpack("<I", data[20:24])[0] != linktype:
        sys.exit(f"{path}: not link type {linktype}")
    at = 24
    while at + 16 <= len(data):
        length = struct.unpack("<I", data[at + 8:at + 12])[0]
        yield data[at + 16:at + 16 + length]
        at += 16 + length


def att(path):
    """(handle, sent, ATT PDU) of every ACL packet on CID 4 of a phone's connection (handle 0x0E00-0x0EFF)."""
    for record in records(path, 201):
        sent, h4 = record[3] == 0, record[4:]
        if len(h4) >= 9 and h4[0] == 0x02:
            handle = struct.unpack("<H", h4[1:3])[0] & 0x0FFF
            if 0x0E00 <= handle <= 0x0EFF and struct.unpack("<H", h4[7:9])[0] == 0x0004:
                yield handle, sent, h4[9:]


def main():
    directory = sys.argv[1]
    wanted = int(sys.argv[sys.argv.index("--phones") + 1]) if "--phones" in sys.argv else (0 if "--android" in sys.argv else 1)
    wanted_android = int(sys.argv[sys.argv.index("--android") + 1]) if "--android" in sys.argv else 0
    blobs, rig_address, android, android_rig_address = [], None, [], None
    jetpack, jetpack_written = [], {}
    for handle, sent, pdu in att(f"{directory}/ble.pcap"):
        value = pdu[3:]
        # Jetpack's parameters (docs/android-jetpack.md: 'J', layout 1, kind 1) and the rig's
        # "accepted" answer (kind 0x81) on the same connection make one session.
        if not sent and pdu[0] == 0x12 and value[:3] == bytes([0x4A, 0x01, 0x01]):
            jetpack_written[handle] = value
        if sent and pdu[0] == 0x1B and value[:3] == bytes([0x4A, 0x01, 0x81]) and handle in jetpack_written:
            jetpack.append((jetpack_written.pop(handle), value))
        if not sent and pdu[0] == 0x12 and len(value) > 0 and value[0] == 0x0B:
            blobs.append(value[1:])
        if not sent and pdu[0] == 0x12 and len(value) > 2 and value[0] in (1, 2, 3) and value[1] == 0x02:
            android.append(value)
        if sent and pdu[0] == 0x1B and len(value) >= 8 and value[0] in (1, 2, 3) and value[1] == 0x01 \
                and value[2] & 1 and value[4:6] == bytes([0x00, 0x14]):
            android_rig_address = value[6:8]  # Android Capability Response (version 1-3): UWB block, address first
        elif sent and pdu[0] == 0x1B and len(value) > 0 and value[0] == 0x01:
            data = value[1:]  # accessory configuration data: 16-octet header, then the UWB configuration data
            rig_address = data[16 + 17:16 + 19]
    problems = []
    if len(blobs) < wanted:
        problems.append(f"{directory}: {len(blobs)} shareable configurations in ble.pcap, wanted {wanted}")
    if len(android) + len(jetpack) < wanted_android:
        problems.append(f"{directory}: {len(android)} Android Ranging Configurations and {len(jetpack)} accepted Jetpack parameters "
                        f"in ble.pcap, wanted {wanted_android}")
    # The board's side: SESSION_INIT (GID 1, OID 0) with its response's handle (UCI 2.0) and the
    # SET_APP_CONFIG (GID 1, OID 3) TLVs sent for each handle.
    inits, configs, pending = {}, {}, None
    for packet in records(f"{directory}/uci.pcap", 299):
        mt, gid, oid = packet[0] >> 5, packet[0] & 0x0F, packet[1] & 0x3F
        payload = packet[4:]
        if (mt, gid, oid) == (1, 1, 0):
            pending = struct.unpack("<I", payload[:4])[0]
        elif (mt, gid, oid) == (2, 1, 0) and pending is not None:
            inits[pending] = struct.unpack("<I", payload[1:5])[0] if len(payload) >= 5 else pending
            pending = None
        elif (mt, gid, oid) == (1, 1, 3):
            handle, count, at, tlvs = struct.unpack("<I", payload[:4])[0], payload[4], 5, {}
            for _ in range(count):
                tlvs[payload[at]] = payload[at + 2:at + 2 + payload[at + 1]]
                at += 2 + payload[at + 1]
            configs.setdefault(handle, []).append(tlvs)
    sessions = [(blob, apple_session(blob, rig_address)) for blob in blobs]
    sessions += [(message, android_session(message, android_rig_address)) for message in android]
    sessions += [(parameters, jetpack_session(parameters, answer)) for parameters, answer in jetpack]
    for octets, (session, expected) in sessions:
        if expected is None:
            problems.append(f"{directory}: a phone's configuration this checker cannot read: {octets.hex()}")
            continue
        if session not in inits:
            problems.append(f"{directory}: no SESSION_INIT for the phone's session 0x{session:08X}")
            continue
        sent = configs.get(inits[session], [])
        if len(sent) != 1:
            problems.append(f"{directory}: session 0x{session:08X}: {len(sent)} SESSION_SET_APP_CONFIG, wanted 1")
            continue
        for tag, value in expected.items():
            if sent[0].get(tag) != value:
                got = sent[0].get(tag)
                problems.append(f"{directory}: session 0x{session:08X}: TLV 0x{tag:02X} is {got.hex() if got is not None else 'missing'}, wanted {value.hex()}")
    for line in problems:
        print(f"check-phone-capture: {line}", file=sys.stderr)
    print(f"check-phone-capture: {directory}: {len(sessions)} phones' sessions checked ({len(blobs)} Apple, {len(android)} Android OOB, {len(jetpack)} Jetpack); "
          f"{len(problems) or 'no'} problems", file=sys.stderr)
    sys.exit(1 if problems else 0)


def apple_session(blob, rig_address):
    """The session id and the TLVs AOSP maps an Apple shareable configuration to; None if unreadable."""
    # Apple's shareable configuration data, version 1.1 (25 octets after the 5-octet header).
    if blob[:5] != bytes([1, 0, 1, 0, 25]) or len(blob) != 30:
        return None, None
    session = struct.unpack("<I", blob[7:11])[0]
    expected = {
        0x00: bytes([0]),  # DEVICE_TYPE controlee
        0x01: bytes([2]),  # RANGING_ROUND_USAGE DS-TWR deferred
        0x02: bytes([0]),  # STS_CONFIG static
        0x03: bytes([0]),  # MULTI_NODE_MODE unicast
        0x04: blob[12:13],  # CHANNEL_NUMBER
        0x05: bytes([1]),  # NO_OF_CONTROLEE
        0x06: bytes(rig_address or b""),  # DEVICE_MAC_ADDRESS: the rig's, as in its 0x01
        0x07: blob[26:28],  # DST_MAC_ADDRESS: the phone's, as in its blob
        0x08: blob[15:17],  # SLOT_DURATION (RSTU)
        0x09: blob[17:19] + bytes(2),  # RANGING_DURATION (ms, 4 octets)
        0x0C: blob[19:20],  # RANGING_ROUND_CONTROL
        0x11: bytes([0]),  # DEVICE_ROLE responder
        0x12: bytes([3]),  # RFRAME_CONFIG SP3
        0x14: blob[11:12],  # PREAMBLE_CODE_INDEX
        0x15: bytes([2]),  # SFD_ID
        0x1B: blob[13:14],  # SLOTS_PER_RR
        0x22: bytes([1]),  # SCHEDULE_MODE time-scheduled
        0x26: bytes([0]),  # MAC_ADDRESS_MODE short
        0x27: bytes([0x4C, 0x00]),  # VENDOR_ID, Apple
        0x28: blob[20:26],  # STATIC_STS_IV
        0x2C: bytes([0]),  # HOPPING_MODE (1.1 has none)
    }
    return session, expected


def android_session(message, rig_address):
    """The session id and the TLVs AOSP opens config id 1 with for an Android Ranging
    Configuration (version, id 0x02, configure (2), start (2), the UWB block: id 0, size, the
    phone's address (2), session id (4), config id, channel, preamble, interval (2), slot (1),
    key length k, key (k), country (2), the rig's role (1 initiator, 2 responder) and mode
    (1 controller, 2 controlee)); None if unreadable or not config id 1 with a static STS key
    (8 octets) or 3 with a provisioned one (16: STS_CONFIG 3, SESSION_KEY, KEY_ROTATION 1,
    KEY_ROTATION_RATE 0 instead of VENDOR_ID and STATIC_STS_IV, as ranging/uwb_backend's
    ConfigurationManager opens its CONFIG_PROVISIONED_UNICAST_DS_TWR)."""
    block = message[6:]
    if len(block) < 15 or block[0] != 0x00 or (block[8], block[14]) not in ((1, 8), (3, 16)) or rig_address is None:
        return None, None
    k = block[14]
    if len(block) < 15 + k + 4:
        return None, None
    key, interval, slot = block[15:15 + k], struct.unpack("<H", block[11:13])[0], block[13]
    role, mode = block[15 + k + 2], block[15 + k + 3]
    provisioned = block[8] == 3
    expected = {
        0x00: bytes([1 if mode == 1 else 0]),  # DEVICE_TYPE from the mode
        0x01: bytes([2]),  # RANGING_ROUND_USAGE DS-TWR deferred
        0x02: bytes([3 if provisioned else 0]),  # STS_CONFIG provisioned or static
        0x03: bytes([0]),  # MULTI_NODE_MODE unicast
        0x04: block[9:10],  # CHANNEL_NUMBER
        0x05: bytes([1]),  # NO_OF_CONTROLEE
        0x06: bytes(rig_address),  # DEVICE_MAC_ADDRESS: the rig's, as in its Capability Response
        0x07: block[2:4],  # DST_MAC_ADDRESS: the phone's, as in its configuration
        0x08: struct.pack("<H", slot * 1200),  # SLOT_DURATION (RSTU; Utils.convertMsToRstu)
        0x09: struct.pack("<I", interval),  # RANGING_DURATION (ms)
        0x0C: bytes([3]),  # RANGING_ROUND_CONTROL
        0x11: bytes([1 if role == 1 else 0]),  # DEVICE_ROLE from the role
        0x12: bytes([3]),  # RFRAME_CONFIG SP3
        0x14: block[10:11],  # PREAMBLE_CODE_INDEX
        0x15: bytes([2]),  # SFD_ID
        0x1B: bytes([6]),  # SLOTS_PER_RR (Utils, id 1)
        0x22: bytes([1]),  # SCHEDULE_MODE time-scheduled
        0x26: bytes([0]),  # MAC_ADDRESS_MODE short
        0x2C: bytes([1]),  # HOPPING_MODE on (Utils, ids 1 and 3)
    }
    if provisioned:
        expected.update({0x45: key, 0x23: bytes([1]), 0x24: bytes([0])})  # SESSION_KEY, KEY_ROTATION, its rate
    else:
        expected.update({0x27: key[0:2], 0x28: key[2:8]})  # VENDOR_ID and STATIC_STS_IV: the key's 2 + 6 octets
    return struct.unpack("<I", block[4:8])[0], expected

def jetpack_session(parameters, answer):
    """The session id and the TLVs of Jetpack's parameters (phone address (2), session id (4),
    sub-session id (4), config type, channel, preamble, update rate, slot ms, the phone's role (0
    controlee, 1 controller), key length, key) as the rig's "accepted" answer (its address (2),
    its role, channel, preamble) completes them: AOSP's config type 1 mapping, the rig in the
    role opposite the phone's, Jetpack's controller the initiator, the interval for the update
    rate (androidx_backend Utils.java: 1 automatic 240 ms, 2 infrequent 600, 3 frequent 120)."""
    if len(parameters) != 28 or parameters[13] != 1 or parameters[19] != 8 or len(answer) != 8:
        return None, None
    interval = {1: 240, 2: 600, 3: 120}.get(parameters[16])
    if interval is None:
        return None, None
    rig_controls = parameters[18] == 0
    key = parameters[20:28]
    expected = {
        0x00: bytes([1 if rig_controls else 0]),  # DEVICE_TYPE: opposite the phone's role
        0x01: bytes([2]), 0x02: bytes([0]), 0x03: bytes([0]),
        0x04: answer[6:7],  # CHANNEL_NUMBER as the rig answered it
        0x05: bytes([1]),
        0x06: answer[3:5],  # DEVICE_MAC_ADDRESS: the rig's, as in its answer
        0x07: parameters[3:5],  # DST_MAC_ADDRESS: the phone's
        0x08: struct.pack("<H", parameters[17] * 1200),
        0x09: struct.pack("<I", interval),
        0x0C: bytes([3]),
        0x11: bytes([1 if rig_controls else 0]),  # DEVICE_ROLE: the controller initiates
        0x12: bytes([3]),
        0x14: answer[7:8],  # PREAMBLE_CODE_INDEX as the rig answered it
        0x15: bytes([2]), 0x1B: bytes([6]), 0x22: bytes([1]), 0x26: bytes([0]),
        0x27: key[0:2], 0x28: key[2:8], 0x2C: bytes([1]),
    }
    return struct.unpack("<I", parameters[5:9])[0], expected

main()
