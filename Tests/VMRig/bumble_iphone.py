"""An iPhone's Nearby Interaction app on the VM rig's air (issue 33): a Bumble host beside the
rigs' controllers that does what Apple's accessory sample and Qorvo's NI app do, written from
their message flow and Apple's blob layouts, not from nearby-bridge's code:

  find     an advert naming Qorvo's NI service (2E938FD0-6A61-11ED-A1EB-0242AC120002), as bluetoothd
           sends it for the rig's D-Bus backend; with --iphone-find rig, the rig's own peer advert
           (company id 0xFFFF, "NB") from the first controller's address (the rig's adapter, hci0;
           rig-b advertises the same way from hci1), for the kernel ATT backend, which advertises
           no service
  connect  LE connection, Exchange MTU (185, as iPhones ask), discover the NI service, subscribe to
           its TX characteristic (2E939AF2-...)
  0x0A     initialize, written to RX (2E93998A-...); wait for 0x01 + accessory configuration data
  0x0B     + a version 1.1 shareable configuration drawn here (session id, preamble code 10,
           channel 9, 6 slots of 2400 RSTU, 240 ms, round control 0x03, a random STS IV and
           short address, 20 ppm); wait for 0x02 (the rig's board ranges)
  0x0C     after 5 s of ranging; wait for 0x03; disconnect

Each step reached, the blob sent and the rig's short address go to the report file as JSON
(bumble_phone.py: the host, finding, connecting, the report).
"""

from __future__ import annotations

import asyncio
import os
import struct

import bumble_phone

NI_SERVICE = "2E938FD0-6A61-11ED-A1EB-0242AC120002"
NI_RX = "2E93998A-6A61-11ED-A1EB-0242AC120002"
NI_TX = "2E939AF2-6A61-11ED-A1EB-0242AC120002"


def shareable_configuration(session: int, sts_iv: bytes, address: int) -> bytes:
    """Apple's shareable configuration data, version 1.1 (little-endian): major 1, minor 1,
    length 25, country code, session id, preamble code, channel, slots per round, slot duration
    (RSTU), ranging interval (ms), round control, static STS IV, the phone's short address,
    maximum clock drift (ppm)."""
    return (struct.pack("<HHB", 1, 1, 25) + b"US" + struct.pack("<IBBHHHB", session, 10, 9, 6, 2400, 240, 0x03)
            + sts_iv + struct.pack("<HH", address, 20))


async def start(link, controller_class, report: str, find: str, rig_address: str) -> asyncio.Task:
    return await bumble_phone.start(link, controller_class, "iphone", "F0:F0:F0:F0:F2:00", 200, report,
                                    lambda device, step: flow(device, step, find, rig_address), find=find)


async def flow(device, step, find: str, rig_address: str) -> None:
    connection, peer, (rx, tx) = await bumble_phone.connect(device, step, NI_SERVICE, find == "ni", rig_address, 185, [NI_RX, NI_TX])
    inbox = await bumble_phone.Inbox.subscribe("iphone", peer, tx)
    await peer.write_value(rx, bytes([0x0A]), with_response=True)
    accessory = (await inbox.expect(bytes([0x01]), 10))[1:]
    # Accessory configuration data: a 16-octet header whose octet 15 counts what follows; in the
    # UWB configuration data, the version at +0, the device role at +16, the short address at +17.
    if len(accessory) < 16 + 21 or accessory[15] != len(accessory) - 16:
        raise RuntimeError(f"accessory configuration data of unexpected length: {accessory.hex()}")
    uwb = accessory[16:]
    step("configuration", accessory=accessory.hex(), rig_address=uwb[17:19].hex(), role=uwb[16])
    blob = shareable_configuration(int.from_bytes(os.urandom(4), "little") | 1, os.urandom(6), int.from_bytes(os.urandom(2), "little") | 1)
    await peer.write_value(rx, bytes([0x0B]) + blob, with_response=True)
    step("configured", blob=blob.hex())
    await inbox.expect(bytes([0x02]), 20)
    step("started")
    await asyncio.sleep(5)
    await peer.write_value(rx, bytes([0x0C]), with_response=True)
    await inbox.expect(bytes([0x03]), 20)
    step("stopped")
    await connection.disconnect()
    step("disconnected")
