"""An Android phone's ranging app on the VM rig's air (issue 31): a Bumble host beside the rigs'
controllers that runs the initiator's side of Android's ranging out-of-band exchange over the
rig's OOB GATT service, written from the spec's message layouts (docs/PROTOCOL.md, "Phones —
Android", from Google's PDL), not from nearby-bridge's code:

  find     an advert naming the OOB service (06194915-A217-44BC-BA00-27EA8D8AEE13), as bluetoothd
           sends it for the rig's D-Bus backend when "android-oob" comes first in phoneServices;
           with --android-find rig, the rig's own peer advert (the kernel ATT backend)
  connect  LE connection, Exchange MTU (517, as Android's requestMtu asks), discover the service,
           subscribe to rig -> phone (2E565238-...); every message is one Write Request on
           phone -> rig (9D0B0BD4-...) and every answer one notification
  0x00     Capability Request {UWB}, in spec version --android-version (1..3, default 3); wait for
           the Capability Response {UWB} in that version and read the rig's offer
  0x02     a Ranging Configuration drawn within the offer: config id 1 (static STS, an 8-octet
           key: vendor id + STS IV) or 3 (provisioned STS, a 16-octet key), channel 5 or 9, preamble
           9-12, an interval among Android's 120/240/600 ms at or above the minimum, slot 1 or 2 ms
           at or above the minimum, the rig's role among those offered and its mode either way, a
           random session id, short address and key, country "US"; v3 adds motion 0; wait for the Configuration Response {UWB} (the board
           ranges)
  0x06     Stop Ranging {UWB} after 5 s of ranging; wait for the Stop Ranging Response {UWB};
           disconnect

Each step reached, the rig's offer, the configuration sent (hex) and the draw go to the report
file as JSON (bumble_phone.py: the host, finding, connecting, the report).
"""

from __future__ import annotations

import asyncio
import random
import struct

import bumble_phone

OOB_SERVICE = "06194915-A217-44BC-BA00-27EA8D8AEE13"
PHONE_TO_RIG = "9D0B0BD4-F02E-49E3-85AC-589BCA0FBB03"
RIG_TO_PHONE = "2E565238-39EC-4BAF-BA4D-116F384094C4"
UWB = bytes([0x01, 0x00])  # the technologies bitmap {UWB}, little-endian

CAPABILITY_REQUEST, CAPABILITY_RESPONSE, CONFIGURATION, CONFIGURATION_RESPONSE = 0x00, 0x01, 0x02, 0x03
STOP, STOP_RESPONSE = 0x06, 0x07


def read_offer(version: int, message: bytes) -> dict:
    """The rig's UWB capability from a Capability Response: version, id 0x01, technologies {UWB},
    then the UWB block (id 0, size 20: address 2, channels 4, preamble indexes 4, config ids 4,
    minimum interval 2, minimum slot 1, roles 1); from v2 transitioning (1) and device type (2)."""
    length = 24 if version == 1 else 27
    if len(message) != length or message[:6] != bytes([version, CAPABILITY_RESPONSE]) + UWB + bytes([0x00, 0x14]):
        raise RuntimeError(f"not a v{version} Capability Response with UWB alone ({length} octets): {message.hex()}")
    channels, preambles, config_ids, interval, slot, roles = struct.unpack("<IIIHBB", message[8:24])
    offer = {
        "rig_address": message[6:8].hex(),
        "channels": [n for n in range(32) if channels >> n & 1],
        "preambles": [n + 1 for n in range(32) if preambles >> n & 1],
        "config_ids": [n for n in range(32) if config_ids >> n & 1],
        "min_interval_ms": interval,
        "min_slot_ms": slot,
        "roles": [name for bit, name in ((0, "initiator"), (1, "responder")) if roles >> bit & 1],
    }
    if version >= 2:
        offer["transitioning"], offer["device_type"] = message[24], struct.unpack("<H", message[25:27])[0]
    return offer


def draw_configuration(version: int, offer: dict, rng: random.Random) -> tuple[bytes, dict]:
    """A Ranging Configuration {UWB} (configured and started) within `offer`, and what was drawn."""
    def pick(what: str, choices: list):
        if not choices:
            raise RuntimeError(f"the rig offers no usable {what}: {offer}")
        return rng.choice(choices)

    draw = {
        "config_id": pick("config id", [c for c in (1, 3) if c in offer["config_ids"]]),
        "channel": pick("channel", [c for c in (5, 9) if c in offer["channels"]]),
        "preamble": pick("preamble", [p for p in (9, 10, 11, 12) if p in offer["preambles"]]),
        "interval_ms": pick("interval", [i for i in (120, 240, 600) if i >= offer["min_interval_ms"]]),
        "slot_ms": pick("slot", [s for s in (1, 2) if s >= offer["min_slot_ms"]]),
        "rig_role": pick("role", offer["roles"]),
        "rig_mode": rng.choice(["controller", "controlee"]),
        "session_id": rng.randrange(1, 1 << 32),
        "phone_address": rng.randrange(1, 1 << 16),
    }
    draw["key"] = rng.randbytes(16 if draw["config_id"] == 3 else 8).hex()
    key = bytes.fromhex(draw["key"])
    block = (struct.pack("<HIBBBHBB", draw["phone_address"], draw["session_id"], draw["config_id"], draw["channel"], draw["preamble"],
                         draw["interval_ms"], draw["slot_ms"], len(key))
             + key + b"US" + bytes([1 if draw["rig_role"] == "initiator" else 2, 1 if draw["rig_mode"] == "controller" else 2]))
    message = (bytes([version, CONFIGURATION]) + UWB + UWB + bytes([0x00, 2 + len(block)]) + block
               + (bytes([0x00]) if version >= 3 else b""))  # v3: motion support, none
    return message, draw


async def start(link, controller_class, report: str, find: str, rig_address: str, version: int) -> asyncio.Task:
    return await bumble_phone.start(link, controller_class, "android", "F0:F0:F0:F0:F3:00", 300, report,
                                    lambda device, step: flow(device, step, find, rig_address, version),
                                    find=find, version=version)


async def flow(device, step, find: str, rig_address: str, version: int) -> None:
    connection, peer, (to_rig, to_phone) = await bumble_phone.connect(
        device, step, OOB_SERVICE, find == "oob", rig_address, 517, [PHONE_TO_RIG, RIG_TO_PHONE])
    inbox = await bumble_phone.Inbox.subscribe("android", peer, to_phone)

    async def send(message_id: int, payload: bytes) -> None:
        await peer.write_value(to_rig, bytes([version, message_id]) + payload, with_response=True)

    async def expect_uwb(answer_id: int, timeout: float) -> None:
        """The answer naming {UWB}, exactly."""
        answer = await inbox.expect(bytes([version, answer_id]), timeout)
        if answer != bytes([version, answer_id]) + UWB:
            raise RuntimeError(f"answer 0x{answer_id:02X} is not {{UWB}}: {answer.hex()}")

    await send(CAPABILITY_REQUEST, UWB)
    capability = await inbox.expect(bytes([version, CAPABILITY_RESPONSE]), 10)
    offer = read_offer(version, capability)
    step("capability", capability=capability.hex(), offer=offer)
    configuration, draw = draw_configuration(version, offer, random.Random())
    await send(CONFIGURATION, configuration[2:])
    step("configuration", configuration=configuration.hex(), draw=draw)
    await expect_uwb(CONFIGURATION_RESPONSE, 20)
    step("configured")
    await asyncio.sleep(5)
    await send(STOP, UWB)
    await expect_uwb(STOP_RESPONSE, 20)
    step("stopped")
    await connection.disconnect()
    step("disconnected")
