"""The records of a pcap file nearby-bridge wrote (little-endian, version 2.4), as bytes.

One reader for the scripts that look inside captures (check-capture-secrets.py, fuzz-seeds.py,
Tests/VMRig/check_two_rigs.py); check-uci-pcap.py keeps its own, stricter walk because checking
every header field is its job. A last record cut short (a recorder killed mid-write) is left out.
"""
import struct
import sys


def records(path):
    data = open(path, "rb").read()
    if len(data) < 24 or struct.unpack("<I", data[:4])[0] != 0xA1B2C3D4:
        sys.exit(f"{path}: not a little-endian pcap file")
    offset = 24
    while offset + 16 <= len(data):
        incl = struct.unpack("<I", data[offset + 8:offset + 12])[0]
        if offset + 16 + incl > len(data):
            return
        yield data[offset + 16:offset + 16 + incl]
        offset += 16 + incl
