"""Attackers on the VM rig's air (issue 35, item 4): Bumble hosts beside the rigs' controllers.

Each attacker is a full Bumble host (Device + Host) on its own Bumble controller, on the same
LocalLink as the rigs' controllers, so it reaches the rigs only the way a dongle on the air would:
advertising, scanning, LE connections and L2CAP credit-based channels, at the rate the
controllers and the rigs' kernels let a connection come up (one pending connection per
controller, a connection only on one of the target's advertising events). Kinds (the names of the
world's attacker kinds, Sources/Simulation/Attack.swift):

  advertReplay     scans for the rigs' adverts (company id 0xFFFF, magic "NB") and advertises the
                   latest one heard, connectable, from its own address, switching to another rig's
                   every 3 s; accepts links and channels on the peer PSM and never answers. A
                   handshake message 1 a rig sends it is kept for handshakeReplay. (Rigs that bind
                   their adverts to their addresses never connect to it: docs/PROTOCOL.md.)
  handshakeReplay  connects to each rig in turn from a new static random address, opens the peer
                   channel and sends a captured message 1: one a rig sent the replayer, else the
                   message 1 made with the event key (--attack-key), the bytes a sniffer of a
                   rig-to-rig link captures (Noise_NNpsk0's message 1 holds only an ephemeral key
                   and a tag); counts the rig's answers.
  garbage          the same with, in turn: random bytes; a message 1 header with a truncated body;
                   a message 1 of the right size with random content (what a keyless peer that
                   follows the protocol sends: no key opens its tag).
  connectionFlood  connects from a new address, opens the channel and stays silent until the rig
                   closes it (or 10 s), then again.

Every attacker but the replayer takes a new static random address for each connection, as an
attacker would against per-address back-off. The counts go to the report file as JSON every
second.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import logging
import os

log = logging.getLogger("bumble_attackers")

KINDS = ("advertReplay", "handshakeReplay", "garbage", "connectionFlood")
MAGIC = bytes([0xFF, 0xFF, 0x4E, 0x42])   # company id 0xFFFF (little-endian), then "NB"
PSM = 0x85
MESSAGE1 = bytes([0x02, 0x10])             # v2 frame header: version 2, handshake initiation
MESSAGE1_SIZE = 4 + 32 + 16                # header, ephemeral key, tag


class Air:
    """What the attackers share: the rigs' adverts heard, a captured message 1, the counts."""

    def __init__(self) -> None:
        self.adverts: dict[str, tuple[object, bytes]] = {}   # advertiser address -> (address, AD bytes)
        self.message1: bytes | None = None
        self.sniffed: bytes | None = None   # message 1 as a sniffer of a rig-to-rig link has it
        self.counts: collections.Counter[str] = collections.Counter()
        self.replayers: set[str] = set()   # the replayers' own addresses: not rigs

    def targets(self) -> list:
        return [address for key, (address, _) in self.adverts.items() if key not in self.replayers]


def sniffed_message1(event_key: bytes) -> bytes:
    """A valid v2 handshake message 1 under `event_key`, framed as on the air (docs/PROTOCOL.md:
    Noise_NNpsk0_25519_ChaChaPoly_SHA256, PSK = HKDF(key, "handshake psk"))."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF
    from noise.connection import NoiseConnection

    psk = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"nearby-bridge v2", info=b"handshake psk").derive(event_key)
    initiator = NoiseConnection.from_name(b"Noise_NNpsk0_25519_ChaChaPoly_SHA256")
    initiator.set_as_initiator()
    initiator.set_psks(psk=psk)
    initiator.set_prologue(b"nearby-bridge peer protocol v2")
    initiator.start_handshake()
    message = initiator.write_message(b"")
    return MESSAGE1 + len(message).to_bytes(2, "little") + message


async def start(link, controller_class, kinds: list[str], report: str | None,
                event_key: bytes | None = None) -> list[asyncio.Task]:
    """Powers one attacker per kind on `link` (plus a scanner) and starts their loops."""
    from bumble import hci
    from bumble.device import Device
    from bumble.host import Host
    from bumble.transport.common import AsyncPipeSink

    air = Air()
    air.sniffed = sniffed_message1(event_key) if event_key else None

    async def new_device(index: int):
        controller = controller_class(f"X{index}", host_source=None, host_sink=None, link=link,
                                      public_address=f"F0:F0:F0:F0:F1:{index:02X}")
        controller.index = 100 + index   # not a rig's controller index (the `rssi` fault command)
        device = Device(name=f"attacker-{index}", address=hci.Address.generate_static_address(),
                        host=Host(controller, AsyncPipeSink(controller)))
        await device.power_on()
        return device

    scanner = await new_device(0)
    scanner.on("advertisement", lambda advert: heard(air, advert))
    await scanner.start_scanning(active=False, filter_duplicates=False)
    loops = {"advertReplay": advert_replay, "handshakeReplay": handshake_replay,
             "garbage": garbage, "connectionFlood": connection_flood}
    tasks = []
    for index, kind in enumerate(kinds, start=1):
        device = await new_device(index)
        tasks.append(asyncio.create_task(guarded(kind, loops[kind](device, air), air)))
    if report:
        tasks.append(asyncio.create_task(write_report_forever(air, report)))
    log.warning("attackers on the air: %s", ", ".join(kinds))
    return tasks


def heard(air: Air, advert) -> None:
    data = bytes(advert.data_bytes)
    if MAGIC in data and str(advert.address) not in air.replayers:
        if str(advert.address) not in air.adverts:
            log.warning("attackers: heard a rig's advert from %s", advert.address)
        air.adverts[str(advert.address)] = (advert.address, data)


async def guarded(kind: str, loop, air: Air) -> None:
    try:
        await loop
    except (Exception, asyncio.CancelledError) as e:  # an attacker that dies says so in the report
        if isinstance(e, asyncio.CancelledError) and asyncio.current_task().cancelling():
            raise
        air.counts[f"{kind}: died ({type(e).__name__}: {e})"] += 1
        log.exception("attacker %s died", kind)


async def write_report_forever(air: Air, path: str) -> None:
    while True:
        await asyncio.sleep(1)
        write_report(air, path)


def write_report(air: Air, path: str) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"counts": dict(air.counts), "rigs heard": len(air.adverts),
                   "message 1 captured": air.message1 is not None}, f, indent=1, sort_keys=True)
    os.replace(tmp, path)


async def advert_replay(device, air: Air) -> None:
    from bumble import l2cap

    def on_channel(channel) -> None:
        air.counts["advertReplay: channels a rig opened"] += 1

        def on_sdu(sdu: bytes) -> None:
            air.counts["advertReplay: frames a rig sent"] += 1
            if sdu[:2] == MESSAGE1 and len(sdu) == MESSAGE1_SIZE and air.message1 is None:
                air.message1 = bytes(sdu)
                log.warning("attackers: captured a handshake message 1")
        channel.sink = on_sdu

    air.replayers.add(str(device.random_address))
    device.create_l2cap_server(spec=l2cap.LeCreditBasedChannelSpec(psm=PSM, mtu=1024), handler=on_channel)
    device.on("connection", lambda _: air.counts.update(["advertReplay: links a rig opened"]))
    for turn in itertools.count():
        adverts = [advert for key, advert in air.adverts.items() if key not in air.replayers]
        if not adverts:
            await asyncio.sleep(0.5)
            continue
        _, data = adverts[turn % len(adverts)]
        if device.is_advertising:
            await device.stop_advertising()
        await device.start_advertising(advertising_data=data, auto_restart=True,
                                       advertising_interval_min=100, advertising_interval_max=150)
        air.counts["advertReplay: adverts replayed (3 s each)"] += 1
        await asyncio.sleep(3)


async def handshake_replay(device, air: Air) -> None:
    while air.message1 is None and air.sniffed is None:
        await asyncio.sleep(0.5)
    await attack_each_rig(device, air, "handshakeReplay", lambda: [air.message1 or air.sniffed], answer_wait=1.0)


async def garbage(device, air: Air) -> None:
    frames = itertools.cycle([
        lambda: os.urandom(1 + os.urandom(1)[0] % 64),
        lambda: MESSAGE1 + bytes([MESSAGE1_SIZE - 4, 0]) + os.urandom(10),
        lambda: MESSAGE1 + bytes([MESSAGE1_SIZE - 4, 0]) + os.urandom(MESSAGE1_SIZE - 4),
    ])
    await attack_each_rig(device, air, "garbage", lambda: [next(frames)()], answer_wait=1.0)


async def connection_flood(device, air: Air) -> None:
    await attack_each_rig(device, air, "connectionFlood", lambda: [], answer_wait=10.0)


async def attack_each_rig(device, air: Air, kind: str, frames, answer_wait: float) -> None:
    """Connects to each rig in turn from a new address, opens the peer channel, sends `frames()`
    and waits up to `answer_wait` s for the rig to answer or close; then disconnects."""
    from bumble import hci, l2cap

    while True:
        targets = air.targets()
        if not targets:
            await asyncio.sleep(0.5)
            continue
        for target in targets:
            address = hci.Address.generate_static_address()
            await device.send_sync_command(hci.HCI_LE_Set_Random_Address_Command(random_address=address))
            device.random_address = address
            connection = None
            try:
                connection = await device.connect(target, timeout=3.0)
                air.counts[f"{kind}: links opened"] += 1
                channel = await asyncio.wait_for(connection.create_l2cap_channel(
                    spec=l2cap.LeCreditBasedChannelSpec(psm=PSM, mtu=1024)), 3.0)
                air.counts[f"{kind}: channels opened"] += 1
                outcome = asyncio.get_running_loop().create_future()
                channel.sink = lambda sdu: outcome.done() or outcome.set_result("answered")
                channel.on("close", lambda: outcome.done() or outcome.set_result("closed by the rig"))
                for frame in frames():
                    channel.write(frame)
                    air.counts[f"{kind}: frames sent"] += 1
                try:
                    air.counts[f"{kind}: {await asyncio.wait_for(outcome, answer_wait)}"] += 1
                except asyncio.TimeoutError:
                    air.counts[f"{kind}: no answer within {answer_wait:g} s"] += 1
            except (Exception, asyncio.CancelledError) as e:
                # refused, timed out, closed under us (Bumble cancels what waits on a link that
                # drops): count it and go on; only our own cancellation ends the loop
                if isinstance(e, asyncio.CancelledError) and asyncio.current_task().cancelling():
                    raise
                why = "the link dropped" if isinstance(e, asyncio.CancelledError) else type(e).__name__
                air.counts[f"{kind}: failed ({why})"] += 1
                log.info("%s: attempt on %s from %s failed: %r", kind, target, address, e)
                # Bumble 0.0.236 keeps a timed-out channel request by its identifier, and the
                # next link's first request (same identifier) is then refused locally
                device.l2cap_channel_manager.le_coc_requests.clear()
                await asyncio.sleep(0.1)
            finally:
                if connection is not None:
                    try:
                        await asyncio.wait_for(connection.disconnect(), 3.0)
                    except Exception:   # already gone
                        pass
