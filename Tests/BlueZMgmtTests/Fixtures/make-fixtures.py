#!/usr/bin/env python3
"""Writes advertising-data.json: advertising data encoded by Google Bumble's AdvertisingData
(an implementation independent of ours) from the field values of docs/PROTOCOL.md, so the
Swift tests can compare our encoder's bytes against it. Run once; the output is checked in.

    python3 -m venv /tmp/v && /tmp/v/bin/pip install bumble==0.0.236
    /tmp/v/bin/python Tests/BlueZMgmtTests/Fixtures/make-fixtures.py
"""
import json
import pathlib
import struct

import bumble
from bumble.core import AdvertisingData

# Field values, in the order of the payload table in docs/PROTOCOL.md.
group, peer_id, uwb_address, capabilities, psm = 0x0102, 0x1122334455667788, 0xDD5F, 0x01, 0x85
body = b"NB" + bytes([1]) + struct.pack("<HQHBB", group, peer_id, uwb_address, capabilities, psm)

advert = AdvertisingData([
    (AdvertisingData.FLAGS, bytes([0x06])),
    (AdvertisingData.MANUFACTURER_SPECIFIC_DATA, struct.pack("<H", 0xFFFF) + body),
])
scan_response = AdvertisingData([(AdvertisingData.COMPLETE_LOCAL_NAME, "Booth rig".encode())])
# A name longer than the 29 bytes a legacy scan response leaves: cut at a character boundary
# (Python's own UTF-8 decoder drops the partial character) and labelled Shortened Local Name.
long_name = "Nord hall booth · stand 1 ✓ Café and more"
shortened = long_name.encode()[:29].decode("utf-8", "ignore")
long_scan_response = AdvertisingData([(AdvertisingData.SHORTENED_LOCAL_NAME, shortened.encode())])

fixture = {
    "generator": f"bumble {bumble.__version__ if hasattr(bumble, '__version__') else '0.0.236'} AdvertisingData",
    "fields": {"group": group, "peer_id": f"{peer_id:016x}", "uwb_short_address": uwb_address,
               "capabilities": capabilities, "psm": psm, "name": "Booth rig"},
    "advertising_data": bytes(advert).hex(),
    "scan_response": bytes(scan_response).hex(),
    "long_name": long_name,
    "long_name_scan_response": bytes(long_scan_response).hex(),
}
out = pathlib.Path(__file__).with_name("advertising-data.json")
out.write_text(json.dumps(fixture, indent=2) + "\n")
print(out.read_text())
