"""What the VM rig's phones share (bumble_iphone.py, bumble_android.py): a Bumble host on a
controller of its own on the rigs' air (LocalLink), which finds the rig, connects, raises ATT_MTU,
discovers the rig's service and reads its notifications, and a JSON report of each step reached
(rewritten at each step; `error` says where the flow stopped).

Finding the rig: beside bluetoothd the rig's D-Bus backend has bluetoothd advertise the first
service of its `phoneServices`, so a phone looks for an advert naming that service's UUID; the
kernel ATT backend advertises no service, so a phone looks for the rig's own peer advert (company
id 0xFFFF, "NB") from the first controller's address (the rig's adapter, hci0; rig-b advertises
the same way from hci1).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os

log = logging.getLogger("bumble_phone")

MAGIC = bytes([0xFF, 0xFF, 0x4E, 0x42])


def service_octets(uuid: str) -> bytes:
    """A 128-bit service UUID as an advert carries it: 16 octets, least significant first."""
    return bytes.fromhex(uuid.replace("-", ""))[::-1]


async def start(link, controller_class, name: str, public_address: str, index: int, report: str, flow, **facts) -> asyncio.Task:
    """Powers a Bumble host `name` on and runs `flow(device, step)` in a task; `step(name,
    **facts)` records a step and its facts in the report."""
    from bumble import hci
    from bumble.device import Device
    from bumble.host import Host
    from bumble.transport.common import AsyncPipeSink

    controller = controller_class(name, host_source=None, host_sink=None, link=link, public_address=public_address)
    controller.index = index
    device = Device(name=name, address=hci.Address.generate_static_address(), host=Host(controller, AsyncPipeSink(controller)))
    await device.power_on()
    state = {"steps": [], **facts}

    def write_report() -> None:
        with open(report + ".tmp", "w") as f:
            json.dump(state, f, indent=1, sort_keys=True)
        os.replace(report + ".tmp", report)

    def step(reached: str, **facts) -> None:
        state["steps"].append(reached)
        state.update(facts)
        log.warning("%s: %s", name, reached)
        write_report()

    async def run() -> None:
        try:
            await flow(device, step)
        except Exception as e:  # the report says how far it got
            state["error"] = f"{type(e).__name__}: {e}"
            log.exception("%s: flow failed", name)
        write_report()

    return asyncio.create_task(run())


async def connect(device, step, service: str, by_service: bool, rig_address: str, mtu: int, characteristics: list[str]):
    """Finds the rig (by an advert naming `service`, or by its peer advert from `rig_address`),
    connects, exchanges MTU `mtu`, discovers `service` and returns (connection, peer, the
    characteristics named, in order); steps `found` and `connected`."""
    from bumble.core import UUID
    from bumble.device import Peer

    found = asyncio.get_running_loop().create_future()
    wanted = service_octets(service) if by_service else MAGIC

    def on_advert(advert) -> None:
        from_rig = by_service or str(advert.address).split("/")[0] == rig_address
        if wanted in bytes(advert.data_bytes) and from_rig and advert.is_connectable and not found.done():
            found.set_result(advert.address)

    device.on("advertisement", on_advert)
    await device.start_scanning(active=False, filter_duplicates=False)
    address = await asyncio.wait_for(found, 240)  # the VM boots and the rig starts meanwhile
    await device.stop_scanning()
    step("found", address=str(address))
    connection = await device.connect(address, timeout=15)
    peer = Peer(connection)
    mtu = await peer.request_mtu(mtu)
    await peer.discover_services([UUID(service)])
    await peer.discover_characteristics()
    found_characteristics = [peer.get_characteristics_by_uuid(UUID(uuid)) for uuid in characteristics]
    if not all(found_characteristics):
        raise RuntimeError(f"no {characteristics} among {[str(c.uuid) for s in peer.services for c in s.characteristics]}")
    step("connected", mtu=mtu)
    return connection, peer, [c[0] for c in found_characteristics]


class Inbox:
    """The values notified on one characteristic, in order."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.messages: asyncio.Queue[bytes] = asyncio.Queue()
        self.ignored: list[str] = []

    @classmethod
    async def subscribe(cls, name: str, peer, characteristic) -> "Inbox":
        inbox = cls(name)
        await peer.subscribe(characteristic, lambda value: inbox.messages.put_nowait(bytes(value)))
        return inbox

    async def expect(self, prefix: bytes, timeout: float) -> bytes:
        """The next value starting with `prefix`; others are logged and skipped (another phone's,
        over bluez < 5.69, which notifies every subscriber)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            left = deadline - asyncio.get_running_loop().time()
            try:
                value = await asyncio.wait_for(self.messages.get(), max(left, 0))
            except asyncio.TimeoutError:
                raise RuntimeError(f"no message {prefix.hex()} within {timeout} s (ignored: {self.ignored})") from None
            if value.startswith(prefix):
                return value
            self.ignored.append(value.hex())
            log.warning("%s: ignored a message %s", self.name, value.hex())
