#!/usr/bin/env python3
"""Seed corpora for scripts/fuzz, from real traffic: a short `nearby-bridge demo --capture`
(UCI packets, HCI advertising reports, peer-protocol frames over L2CAP), the built-in scenarios
and profile cards, and FiRa UCI / BlueZ mgmt byte layouts as the specs give them. Written at run
time, so the repository holds no binary blobs.

    scripts/fuzz-seeds.py CAPTURE-DIR OUT-DIR
CAPTURE-DIR is a demo capture (one node directory is used); OUT-DIR gets one directory per target.
"""
import glob
import hashlib
import os
import struct
import sys

from pcaprecords import records

capture, out = sys.argv[1], sys.argv[2]


def chunked(data):
    """The fuzz targets' chunk framing: a length byte (n - 1, n <= 64), then n bytes."""
    result = b""
    for i in range(0, len(data), 64):
        piece = data[i:i + 64]
        result += bytes([len(piece) - 1]) + piece
    return result


def write(target, data, limit=40):
    directory = os.path.join(out, target)
    os.makedirs(directory, exist_ok=True)
    if len(os.listdir(directory)) >= limit:
        return
    with open(os.path.join(directory, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


node = sorted(glob.glob(os.path.join(capture, "*", "uci.pcap")))[0].rsplit("/", 1)[0]
uci = list(records(os.path.join(node, "uci.pcap")))
ble = list(records(os.path.join(node, "ble.pcap")))

# UCI: every distinct kind of packet the demo exchanged, alone and in one stream; the host
# target gets each response behind the command that asks for it (selector as fuzzUCIHost reads it).
kinds = {}
for packet in uci:
    kinds.setdefault((packet[0] & 0xEF, packet[1]), packet)
for packet in kinds.values():
    write("uci-stream", chunked(packet))
write("uci-stream", chunked(b"".join(kinds.values())))
selectors = {(0x40, 0x02): 0, (0x40, 0x03): 1, (0x41, 0x00): 2, (0x41, 0x03): 3, (0x41, 0x07): 4, (0x40, 0x00): 5}
notifications = b"".join(p for p in kinds.values() if p[0] >> 5 == 3)
for (mt_gid, oid), selector in selectors.items():
    for packet in kinds.values():
        if (packet[0] & 0xEF, packet[1]) == (mt_gid, oid):
            write("uci-host", bytes([selector]) + chunked(notifications[:200] + packet))
# CORE_GENERIC_ERROR_NTF STATUS_COMMAND_RETRY, then the answer (FiRa UCI 2.0 table 13/17).
write("uci-host", bytes([5]) + chunked(bytes.fromhex("6007000 10a".replace(" ", "")) + bytes.fromhex("4000000100")))

# Bluetooth: advertising data from LE advertising reports, peer frames from LE CoC SDUs, and
# mgmt Device Found events (BlueZ doc/mgmt-api.txt) wrapping the same advertising data.
frames = []
for record in ble:
    h4 = record[4:]
    if len(h4) >= 15 and h4[0] == 0x04 and h4[1] == 0x3E and h4[3] == 0x02:
        length = h4[13]
        ad = h4[14:14 + length]
        write("advertising-data", ad)
        write("peer-message", ad)
        event = b"\x00\x00" + bytes(range(1, 7)) + b"\x01" + bytes([0xC4]) + b"\x00\x00\x00\x00" + struct.pack("<H", len(ad)) + ad
        write("mgmt", struct.pack("<HHH", 0x0012, 0, len(event) - 2) + event[2:])
    elif len(h4) > 11 and h4[0] == 0x02:
        frames.append(h4[11:])
        write("peer-message", h4[11:])
# A mgmt Command Complete for Read Controller Information (opcode 0x0004), status success.
info = bytes(6) + b"\x09\x02\x00" + struct.pack("<II", 0x1FFFF, 0x0AC1) + b"\x00\x00\x00" + b"hci0".ljust(249, b"\x00") + b"hci0".ljust(11, b"\x00")
write("mgmt", struct.pack("<HHH", 0x0001, 0, 3 + len(info)) + struct.pack("<HB", 0x0004, 0) + info)

# The peer machine: each role hears the advert, opens the link, then gets the demo's frames
# (op 4: a frame of the next byte's length) with ticks (op 12) between them.
for role in (0, 1):
    script = bytes([role, 0, 1, 2])
    for frame in frames[:12]:
        if len(frame) < 256:
            script += bytes([4, len(frame)]) + frame + bytes([12])
    write("peer-machine", script)

# JSON: the built-in scenarios, the example card and config, the capture's manifest.
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for path in glob.glob(os.path.join(root, "Sources/Simulation/Scenarios/*.json")) + glob.glob(os.path.join(root, "packaging/*.json")) \
        + [os.path.join(capture, "capture.json")]:
    write("json", open(path, "rb").read())

# The capture as replay reads it: the first records of both files.
def head(path, count):
    data = open(path, "rb").read()
    offset = 24
    for _ in range(count):
        if offset + 16 > len(data):
            break
        offset += 16 + struct.unpack("<I", data[offset + 8:offset + 12])[0]
    return data[:offset]
uci_head, ble_head = head(os.path.join(node, "uci.pcap"), 30), head(os.path.join(node, "ble.pcap"), 30)
write("capture", struct.pack("<H", len(uci_head)) + uci_head + ble_head)

# Phones: the Nearby Interaction accessory messages, after the board octet fuzzPhoneMessage reads
# (0x09: channels 5 and 9, hopping). The shareable configurations follow the layout of Apple's
# Nearby Interaction Accessory Protocol Specification R4 (docs/PROTOCOL.md, "Phones"): 1.1 and
# 2.0, then the accessory configuration data 1.1 the rig would answer with.
shareable_1_1 = struct.pack("<HHB", 1, 1, 25) + b"US" + struct.pack("<IBBHHHB", 0x12345678, 10, 9, 25, 2400, 240, 3) \
    + bytes(range(1, 7)) + b"\xc4\xd3" + struct.pack("<H", 20)
shareable_2_0 = struct.pack("<HHB", 2, 0, 30) + b"JP" + struct.pack("<IBBHHHB", 0xDEADBEEF, 11, 5, 6, 3600, 96, 2) \
    + bytes(range(0xA0, 0xA6)) + b"\x34\x12" + struct.pack("<H", 200) + bytes(4) + b"\x01"
accessory_1_1 = struct.pack("<HHB", 1, 0, 0) + bytes(10) + bytes([21]) + struct.pack("<HHIIIB", 1, 1, 0, 0, 0, 0) \
    + struct.pack("<HH", 0xA1B2, 20)
for message in (b"\x0a", b"\x0c", b"\x02", b"\x03", b"\x0b" + shareable_1_1, b"\x0b" + shareable_2_0, b"\x01" + accessory_1_1):
    write("phone-message", b"\x09" + message)
write("phone-message", b"\x09" + shareable_2_0)

# Android's ranging OOB messages, after the board octet fuzzAndroidOOB reads (0x69: channels 5
# and 9, config id 1, a 120 ms minimum interval), laid out from the spec's PDL as docs/PROTOCOL.md
# ("Phones — Android") gives them: version, id, little-endian fields, technology blocks whose
# size octet counts their own two header octets.
uwb_capability = b"\x00\x14" + b"\xa1\xb2" + struct.pack("<IIIHBB", 0x220, 0xF00, 0x2, 120, 1, 3)
uwb_configuration = b"\x00\x1b" + b"\xc4\xd3" + struct.pack("<IBBBHBB", 0x12345678, 1, 9, 10, 240, 2, 8) \
    + bytes([8, 7, 1, 2, 3, 4, 5, 6]) + b"US" + b"\x02\x02"
rssi = b"\x03\x08" + bytes(range(0x11, 0x17))
for message in (b"\x01\x00\x01\x00", b"\x01\x01\x01\x00" + uwb_capability,
                b"\x02\x01\x09\x00" + uwb_capability + rssi + b"\x01\x03\x00",
                b"\x01\x02\x01\x00\x01\x00" + uwb_configuration, b"\x03\x02\x01\x00\x01\x00" + uwb_configuration + b"\x01",
                b"\x01\x03\x01\x00", b"\x01\x06\x01\x00", b"\x01\x07\x01\x00", b"\x03\x08\x02"):
    write("android-oob", b"\x69" + message)
# Config id 3 (provisioned STS, a 16-octet key, block size 35) for a board with provisioned STS
# (0x79: the board above with bit 4 set).
provisioned = b"\x00\x23" + b"\xc4\xd3" + struct.pack("<IBBBHBB", 0x12345678, 3, 9, 10, 240, 2, 16) \
    + bytes(range(0x40, 0x50)) + b"US" + b"\x02\x02"
write("android-oob", b"\x79" + b"\x01\x02\x01\x00\x01\x00" + provisioned)

# The rig's Jetpack layout on the same target (docs/android-jetpack.md): magic 0x4A, version 1,
# kind; parameters from a controller phone and from a controlee phone leaving the complex channel
# to the rig, a stop, and the rig's accepted / stopped / refused answers.
jetpack_key = bytes([8, 7, 1, 2, 3, 4, 5, 6])
for message in (b"\x4a\x01\x01" + b"\xc4\xd3" + struct.pack("<IIBBBBBBB", 0x12345678, 0, 1, 9, 10, 1, 2, 1, 8) + jetpack_key,
                b"\x4a\x01\x01" + b"\xc4\xd3" + struct.pack("<IIBBBBBBB", 0x12345678, 0, 1, 0, 0, 3, 1, 0, 8) + jetpack_key,
                b"\x4a\x01\x02", b"\x4a\x01\x81\xa1\xb2\x00\x09\x0a", b"\x4a\x01\x82\x00", b"\x4a\x01\x83\x0b"):
    write("android-oob", b"\x69" + message)

# The ATT server: a selector octet (bit 0 Generic Access, 1 Qorvo NI, 2 Nordic UART, 3 the token,
# 4-6 the Server Rx MTU in steps of 33 above 23, 7 an encrypted link), then PDUs, each after a
# length octet, laid out as the Core Specification Vol 3 Part F §3.4 gives them: GATT's discovery
# (Part G §4.4.1, §4.6.1, §4.7.1), a CCCD write, writes to Qorvo's RX, and requests it refuses.
def att(selector, *pdus):
    return bytes([selector]) + b"".join(bytes([len(p)]) + p for p in pdus)


ni_rx = 5  # with the NI service first: 1 service, 2-3 SEC, 4-5 RX, 6-8 TX and its 0x2902
write("att-server", att(0x0E,
    struct.pack("<BH", 0x02, 185),
    struct.pack("<BHH", 0x10, 1, 0xFFFF) + b"\x00\x28",
    struct.pack("<BHH", 0x08, 1, 8) + b"\x03\x28",
    struct.pack("<BHH", 0x04, 8, 8),
    struct.pack("<BHH", 0x12, 8, 1),
    struct.pack("<BH", 0x12, ni_rx) + b"\x0a",
    struct.pack("<BH", 0x52, ni_rx) + b"\x0c"))
write("att-server", att(0x8F,
    struct.pack("<BHH", 0x06, 1, 0xFFFF) + b"\x00\x28" + bytes.fromhex("9ECADC240EE5A9E093F3A3B50100406E"),
    struct.pack("<BH", 0x0A, 3), struct.pack("<BHH", 0x0C, 3, 4), struct.pack("<BH", 0x0A, 7)))
write("att-server", att(0x3C,
    struct.pack("<BH", 0x02, 0x0200), struct.pack("<BH", 0x12, 9) + bytes(64), struct.pack("<BH", 0x12, 9) + bytes(65),
    struct.pack("<BHH", 0x0E, 1, 2), b"\x16\x05\x00\x00\x00\x01", b"\x1e", b"\xd2\x05\x00" + bytes(13), b""))
