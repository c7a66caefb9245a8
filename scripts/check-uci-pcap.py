#!/usr/bin/env python3
"""Checks a UCI capture independently of nearby-bridge's Swift code: the pcap global header
says LINKTYPE_FIRA_UCI (299), and every record is exactly one FiRa UCI packet (MT 0-3; control
packets: length octet 3 = payload length; data packets: octets 2-3 LE). Debian 12's tshark (4.0)
has no UCI dissector, so this is the check CI can run; Wireshark >= 4.2 decodes these files.

    scripts/check-uci-pcap.py FILE.pcap [--expect GID:OID[:MT] ...]
Prints a count per message kind; exits 1 on the first bad record or a missing expected kind.

It also decodes every CORE_GET_CAPS_INFO response with the capability numbering of the UCI
version the board reported in CORE_GET_DEVICE_INFO (AOSP's CapabilityParam: UCI 1.x from 0x00,
2.0 with MAX_MESSAGE_SIZE 0x00, MAX_DATA_PACKET_PAYLOAD_SIZE 0x01, the 1.x items moved up by three)
and fails when the capabilities contradict themselves or the sessions: a data packet payload
larger than the largest message, a session on a channel the board does not list
(SUPPORTED_CHANNELS: bit 0 channel 5, then 6, 8, 9, 10, 12, 13, 14), angles asked of a board whose
SUPPORTED_AOA says none, or provisioned STS on a board whose SUPPORTED_STS_CONFIG lacks it.
And it checks that the host followed the board's UCI generation: session commands name a session
by the handle SESSION_INIT_RSP returned (2.0) or by the session id (1.x, whose response is a
status alone), and a 1.x board is never sent RSSI_REPORTING (0x13) or SESSION_KEY (0x45), which
UCI 1.1 does not define.
"""
import collections
import struct
import sys

path, expected = sys.argv[1], [a for a in sys.argv[2:] if a != "--expect"]
data = open(path, "rb").read()
magic, major, minor, _, _, snaplen, linktype = struct.unpack("<IHHiIII", data[:24])
if magic != 0xA1B2C3D4 or (major, minor) != (2, 4):
    sys.exit(f"{path}: not a little-endian pcap 2.4 file")
if linktype != 299:
    sys.exit(f"{path}: link type {linktype}, expected 299 (LINKTYPE_FIRA_UCI)")
offset, kinds, count = 24, collections.Counter(), 0
uci_major, caps, configs = None, None, []
session_ids, handles, tokens = set(), set(), set()
while offset < len(data):
    if offset + 16 > len(data):
        sys.exit(f"{path}: truncated record header at byte {offset}")
    sec, usec, incl, orig = struct.unpack("<IIII", data[offset:offset + 16])
    packet = data[offset + 16:offset + 16 + incl]
    if incl != orig or len(packet) != incl or usec >= 1_000_000:
        sys.exit(f"{path}: bad record header at byte {offset}")
    mt = packet[0] >> 5
    if mt > 3 or len(packet) < 4:
        sys.exit(f"{path}: record {count}: not a UCI packet ({packet[:8].hex()})")
    payload = (packet[2] | packet[3] << 8) if mt == 0 else packet[3]
    if payload + 4 != len(packet):
        sys.exit(f"{path}: record {count}: header says {payload} payload bytes, record has {len(packet) - 4}")
    kinds[(packet[0] & 0x0F, packet[1] & 0x3F, mt)] += 1
    gid, oid, body = packet[0] & 0x0F, packet[1] & 0x3F, packet[4:]
    if (mt, gid, oid) == (2, 0, 2) and len(body) >= 3 and body[0] == 0:
        uci_major = body[1]  # CORE_GET_DEVICE_INFO: status, UCI version (major, then minor)
    elif (mt, gid, oid) == (2, 0, 3) and len(body) >= 2 and body[0] == 0:
        caps, at = {}, 2  # CORE_GET_CAPS_INFO: status, count, TLVs
        for _ in range(body[1]):
            caps[body[at]] = body[at + 2:at + 2 + body[at + 1]]
            at += 2 + body[at + 1]
    elif (mt, gid, oid) == (1, 1, 0) and len(body) == 5:
        session_ids.add(body[:4])  # SESSION_INIT: session id, type
    elif (mt, gid, oid) == (2, 1, 0) and len(body) == 5 and body[0] == 0:
        handles.add(body[1:5])  # SESSION_INIT_RSP (2.0): status, session handle
    elif (mt, gid, oid) == (1, 1, 3) and len(body) >= 5:
        tokens.add(body[:4])
        config, at = {}, 5  # SESSION_SET_APP_CONFIG: session, count, TLVs
        for _ in range(body[4]):
            config[body[at]] = body[at + 2:at + 2 + body[at + 1]]
            at += 2 + body[at + 1]
        configs.append(config)
    offset += 16 + incl
    count += 1
names = {1: "CMD", 2: "RSP", 3: "NTF", 0: "DATA"}
for (gid, oid, mt), n in sorted(kinds.items()):
    print(f"  {names[mt]} GID {gid:#x} OID {oid:#04x}: {n}", file=sys.stderr)
problems = []
if caps is not None:
    two = (uci_major or 0) >= 2
    shift = 3 if two else 0
    names = {"channels": 0x0B + shift, "aoa": 0x10 + shift, "sts": 0x04 + shift}
    sizes = (0x00, 0x01) if two else (0x12, 0x13)
    if sizes[0] in caps and sizes[1] in caps:
        message, payload = int.from_bytes(caps[sizes[0]], "little"), int.from_bytes(caps[sizes[1]], "little")
        if payload > message:
            problems.append(f"MAX_DATA_PACKET_PAYLOAD_SIZE {payload} is larger than MAX_MESSAGE_SIZE {message}")
    if names["channels"] in caps:
        bits = caps[names["channels"]][0]
        channels = [c for i, c in enumerate([5, 6, 8, 9, 10, 12, 13, 14]) if bits & (1 << i)]
        used = {c[0x04][0] for c in configs if 0x04 in c}
        if not used <= set(channels):
            problems.append(f"sessions on channels {sorted(used)}, the board lists {channels}")
    if names["aoa"] in caps and not any(caps[names["aoa"]]):
        if any(c.get(0x0D, b"\0")[0] for c in configs):
            problems.append("angles asked for (AOA_RESULT_REQ 1) of a board whose SUPPORTED_AOA says none")
    if names["sts"] in caps and any(c.get(0x02, b"\0")[0] == 3 for c in configs):
        if not caps[names["sts"]][0] & (1 << 3):
            problems.append("provisioned STS configured on a board whose SUPPORTED_STS_CONFIG lacks it")
if uci_major is not None and tokens:
    named_by = handles if uci_major >= 2 else session_ids
    if not tokens <= named_by:
        problems.append(f"SET_APP_CONFIG names sessions {sorted(t.hex() for t in tokens - named_by)}, which are not "
                        f"{'handles from SESSION_INIT_RSP' if uci_major >= 2 else 'session ids from SESSION_INIT'} (UCI {uci_major}.x)")
    if uci_major < 2 and any(0x13 in c or 0x45 in c for c in configs):
        problems.append("RSSI_REPORTING or SESSION_KEY sent to a UCI 1.x board, which does not define them")
if problems:
    sys.exit(f"{path}: " + "; ".join(problems))
if caps is not None:
    print(f"  capabilities (UCI {'2.0' if two else '1.x'} numbering): consistent with themselves and with "
          f"{len(configs)} SET_APP_CONFIG", file=sys.stderr)
for item in expected:
    parts = [int(x, 16) for x in item.split(":")]
    if not any(k[0] == parts[0] and k[1] == parts[1] and (len(parts) < 3 or k[2] == parts[2]) for k in kinds):
        sys.exit(f"{path}: no packet of kind {item}")
print(f"{path}: {count} UCI packets, link type 299", file=sys.stderr)
