#!/usr/bin/env python3
"""Checks a UCI capture independently of nearby-bridge's Swift code: the pcap global header
says LINKTYPE_FIRA_UCI (299), and every record is exactly one FiRa UCI packet (MT 0-3; control
packets: length octet 3 = payload length; data packets: octets 2-3 LE). Debian 12's tshark (4.0)
has no UCI dissector, so this is the check CI can run; Wireshark >= 4.2 decodes these files.

    scripts/check-uci-pcap.py FILE.pcap [--expect GID:OID[:MT] ...]
Prints a count per message kind; exits 1 on the first bad record or a missing expected kind.
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
    offset += 16 + incl
    count += 1
names = {1: "CMD", 2: "RSP", 3: "NTF", 0: "DATA"}
for (gid, oid, mt), n in sorted(kinds.items()):
    print(f"  {names[mt]} GID {gid:#x} OID {oid:#04x}: {n}", file=sys.stderr)
for item in expected:
    parts = [int(x, 16) for x in item.split(":")]
    if not any(k[0] == parts[0] and k[1] == parts[1] and (len(parts) < 3 or k[2] == parts[2]) for k in kinds):
        sys.exit(f"{path}: no packet of kind {item}")
print(f"{path}: {count} UCI packets, link type 299", file=sys.stderr)
