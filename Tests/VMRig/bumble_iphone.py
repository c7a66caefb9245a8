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

Each step reached, the blob sent and the rig's short address go to the report file as JSON.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import struct

log = logging.getLogger("bumble_iphone")

NI_SERVICE = "2E938FD0-6A61-11ED-A1EB-0242AC120002"
NI_RX = "2E93998A-6A61-11ED-A1EB-0242AC120002"
NI_TX = "2E939AF2-6A61-11ED-A1EB-0242AC120002"
MAGIC = bytes([0xFF, 0xFF, 0x4E, 0x42])


def ni_service_octets() -> bytes:
    """The NI service UUID as an advert carries it: 16 octets, least significant first."""
    return bytes.fromhex(NI_SERVICE.replace("-", ""))[::-1]


def shareable_configuration(session: int, sts_iv: bytes, address: int) -> bytes:
    """Apple's shareable configuration data, version 1.1 (little-endian): major 1, minor 1,
    length 25, country code, session id, preamble code, channel, slots per round, slot duration
    (RSTU), ranging interval (ms), round control, static STS IV, the phone's short address,
    maximum clock drift (ppm)."""
    return (struct.pack("<HHB", 1, 1, 25) + b"US" + struct.pack("<IBBHHHB", session, 10, 9, 6, 2400, 240, 0x03)
            + sts_iv + struct.pack("<HH", address, 20))


async def start(link, controller_class, report: str, find: str, rig_address: str) -> asyncio.Task:
    from bumble import hci
    from bumble.device import Device
    from bumble.host import Host
    from bumble.transport.common import AsyncPipeSink

    controller = controller_class("P0", host_source=None, host_sink=None, link=link, public_address="F0:F0:F0:F0:F2:00")
    controller.index = 200
    device = Device(name="iphone", address=hci.Address.generate_static_address(), host=Host(controller, AsyncPipeSink(controller)))
    await device.power_on()
    state = {"steps": [], "find": find}

    def write_report() -> None:
        with open(report + ".tmp", "w") as f:
            json.dump(state, f, indent=1, sort_keys=True)
        os.replace(report + ".tmp", report)

    async def run() -> None:
        try:
            await flow(device, state, find, rig_address, write_report)
        except Exception as e:  # the report says how far it got
            state["error"] = f"{type(e).__name__}: {e}"
            log.exception("iphone: flow failed")
        write_report()

    return asyncio.create_task(run())


async def flow(device, state, find: str, rig_address: str, write_report) -> None:
    from bumble.core import UUID
    from bumble.device import Peer

    def step(name: str, **facts) -> None:
        state["steps"].append(name)
        state.update(facts)
        log.warning("iphone: %s", name)
        write_report()

    found = asyncio.get_running_loop().create_future()
    wanted = ni_service_octets() if find == "ni" else MAGIC

    def on_advert(advert) -> None:
        from_rig = find == "ni" or str(advert.address).split("/")[0] == rig_address
        if wanted in bytes(advert.data_bytes) and from_rig and advert.is_connectable and not found.done():
            found.set_result(advert.address)

    device.on("advertisement", on_advert)
    await device.start_scanning(active=False, filter_duplicates=False)
    address = await asyncio.wait_for(found, 240)  # the VM boots and the rig starts meanwhile
    await device.stop_scanning()
    step("found", address=str(address))
    connection = await device.connect(address, timeout=15)
    peer = Peer(connection)
    mtu = await peer.request_mtu(185)
    await peer.discover_services([UUID(NI_SERVICE)])
    await peer.discover_characteristics()
    rx = peer.get_characteristics_by_uuid(UUID(NI_RX))
    tx = peer.get_characteristics_by_uuid(UUID(NI_TX))
    if not rx or not tx:
        raise RuntimeError(f"no NI RX/TX characteristic among {[str(s.uuid) for s in peer.services]}")
    step("connected", mtu=mtu)
    messages: asyncio.Queue[bytes] = asyncio.Queue()
    await peer.subscribe(tx[0], lambda value: messages.put_nowait(bytes(value)))

    async def expect(message_id: int, timeout: float) -> bytes:
        while True:
            value = await asyncio.wait_for(messages.get(), timeout)
            if value[:1] == bytes([message_id]):
                return value[1:]
            log.warning("iphone: ignored a message 0x%02X (another phone's, over bluez < 5.69)", value[0] if value else -1)

    await peer.write_value(rx[0], bytes([0x0A]), with_response=True)
    accessory = await expect(0x01, 10)
    # Accessory configuration data: a 16-octet header whose octet 15 counts what follows; in the
    # UWB configuration data, the version at +0, the device role at +16, the short address at +17.
    if len(accessory) < 16 + 21 or accessory[15] != len(accessory) - 16:
        raise RuntimeError(f"accessory configuration data of unexpected length: {accessory.hex()}")
    uwb = accessory[16:]
    step("configuration", accessory=accessory.hex(), rig_address=uwb[17:19].hex(), role=uwb[16])
    blob = shareable_configuration(int.from_bytes(os.urandom(4), "little") | 1, os.urandom(6), int.from_bytes(os.urandom(2), "little") | 1)
    await peer.write_value(rx[0], bytes([0x0B]) + blob, with_response=True)
    step("configured", blob=blob.hex())
    await expect(0x02, 20)
    step("started")
    await asyncio.sleep(5)
    await peer.write_value(rx[0], bytes([0x0C]), with_response=True)
    await expect(0x03, 20)
    step("stopped")
    await connection.disconnect()
    step("disconnected")
