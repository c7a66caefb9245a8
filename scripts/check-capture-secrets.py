#!/usr/bin/env python3
"""Checks a keyed --capture directory, independently of nearby-bridge's Swift code, for secrets on
the air (docs/PROTOCOL.md, "Security"): no node's ble.pcap may hold

  - the STS material any board was given (static STS IV, alone and after its vendor id; session
    and sub-session keys: app config TLVs 0x27, 0x28, 0x45, 0x46 of SESSION_SET_APP_CONFIG in
    every uci.pcap),
  - any card's bytes (each card's JSON, and every string value of 5 bytes or more in it),
  - the event key or a key seed (from secrets.json, as bytes and as hex text);

and the event key and key seeds must not appear in events.jsonl, capture.json, any uci.pcap, or
the log files given with --log. secrets.json itself must be mode 0600. ble.pcap is searched as
written and as the SDUs its K-frames carry (an SDU over one MPS is split in the file).

    scripts/check-capture-secrets.py DIR [--card JSON-FILE ...] [--log FILE ...] [--no-sessions]

--card adds cards to search for besides those in capture.json (a rig's capture names only its
own). Exits 1 naming every leak; also when the capture holds no STS material (unless
--no-sessions: a rig that was never let range) or no card, which would make the search prove
nothing. Run on a capture without a key it fails (v1 sends both in clear).
"""
import glob
import json
import os
import stat
import sys

from pcaprecords import records

STS_TAGS = {0x27: "STS vendor id", 0x28: "static STS IV", 0x45: "session key", 0x46: "sub-session key"}


def sts_material(uci_pcap):
    """(what, bytes) for every STS value a SESSION_SET_APP_CONFIG command carried."""
    found = []
    for packet in records(uci_pcap):
        if len(packet) < 9 or packet[0] >> 5 != 1 or packet[0] & 0x0F != 1 or packet[1] & 0x3F != 3:
            continue
        payload = packet[4:4 + packet[3]]
        count, offset, values = payload[4], 5, {}
        for _ in range(count):
            if offset + 2 > len(payload):
                break
            tag, length = payload[offset], payload[offset + 1]
            value = payload[offset + 2:offset + 2 + length]
            if tag in STS_TAGS:
                values[tag] = bytes(value)
            offset += 2 + length
        # The vendor id alone (2 bytes) would turn up in any capture by chance: it is searched
        # together with the IV, as a v1 rangingParameters frame carries them.
        if 0x28 in values:
            found.append((STS_TAGS[0x28], values[0x28]))
            if 0x27 in values:
                found.append(("STS vendor id + IV", values[0x27] + values[0x28]))
        found += [(STS_TAGS[tag], values[tag]) for tag in (0x45, 0x46) if tag in values]
    return found


def strings_of(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings_of(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings_of(v)


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    directory, options = args[0], {"--card": [], "--log": [], "--no-sessions": []}
    current = None
    for arg in args[1:]:
        if arg in options:
            current = arg
            if arg == "--no-sessions":
                options[arg].append(True)
        elif current in ("--card", "--log"):
            options[current].append(arg)
        else:
            sys.exit(f"unexpected argument {arg}\n{__doc__}")
    logs = options["--log"]
    manifest = json.load(open(os.path.join(directory, "capture.json")))
    cards = [(node["name"], node["card"]) for node in manifest["nodes"]]
    cards += [(path, open(path).read().strip()) for path in options["--card"]]
    secrets_path = os.path.join(directory, "secrets.json")
    leaks = []

    needles = []  # (what, bytes, where it must not be: "air" or "anywhere")
    sts_count = 0
    for uci in sorted(glob.glob(os.path.join(directory, "*", "uci.pcap"))):
        node = os.path.basename(os.path.dirname(uci))
        for what, value in sts_material(uci):
            needles.append((f"{node}'s {what} {value.hex()}", value, "air"))
            sts_count += 1
    card_count = 0
    for owner, card in cards:
        canonical = json.dumps(json.loads(card), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        for form in {card, canonical}:  # as written, and as the bridge sends it (sorted keys, one line)
            needles.append((f"{owner}'s card", form.encode(), "air"))
        card_count += 1
        for text in set(strings_of(json.loads(card))):
            if len(text.encode()) >= 5:
                needles.append((f"{owner}'s card text {text!r}", text.encode(), "air"))
    if os.path.exists(secrets_path):
        mode = stat.S_IMODE(os.stat(secrets_path).st_mode)
        if mode != 0o600:
            leaks.append(f"{secrets_path} has mode {mode:o}, not 600")
        for name, entry in json.load(open(secrets_path))["nodes"].items():
            for what in ("groupKey", "keySeed"):
                text = entry[what]
                needles.append((f"{name}'s {what} (bytes)", bytes.fromhex(text), "anywhere"))
                for form in (text.lower(), text.upper()):
                    needles.append((f"{name}'s {what} (hex)", form.encode(), "anywhere"))
    elif any((node.get("security") or {}).get("keyFingerprint") for node in manifest["nodes"]):
        leaks.append(f"{secrets_path} is missing although nodes ran with an event key")

    if (sts_count == 0 and not options["--no-sessions"]) or card_count == 0:
        sys.exit(f"{directory}: no STS material ({sts_count}) or no cards ({card_count}) to search for: the check would prove nothing")

    air = {path: open(path, "rb").read() + b"\0".join(sdus(path)) for path in glob.glob(os.path.join(directory, "*", "ble.pcap*"))}
    elsewhere = {path: open(path, "rb").read() for path in
                 glob.glob(os.path.join(directory, "*", "uci.pcap*")) + glob.glob(os.path.join(directory, "events.jsonl*"))
                 + [os.path.join(directory, "capture.json")] + logs}
    for what, value, scope in needles:
        for path, data in list(air.items()) + (list(elsewhere.items()) if scope == "anywhere" else []):
            if value in data:
                leaks.append(f"{what} is in {path}")
    if leaks:
        print(f"{directory}: {len(leaks)} secrets where they must not be:", file=sys.stderr)
        for leak in sorted(set(leaks))[:40]:
            print(f"  {leak}", file=sys.stderr)
        sys.exit(1)
    print(f"{directory}: none of {sts_count} STS values, {card_count} cards or the keys in {len(air)} BLE captures; "
          f"keys in none of {len(elsewhere)} other files", file=sys.stderr)


def sdus(path):
    """The SDUs of ble.pcap's L2CAP channels, joined from their K-frames (an SDU longer than one
    MPS is cut into several, so a secret in it may be split in the file's bytes)."""
    partial, whole = {}, []
    for record in records(path):
        h4 = record[4:]
        if len(h4) < 9 or h4[0] != 0x02 or int.from_bytes(h4[7:9], "little") < 0x0040:
            continue
        key = (record[3], int.from_bytes(h4[1:3], "little") & 0x0EFF)
        length, data = partial.pop(key, (None, b""))
        if length is None:
            length, data = int.from_bytes(h4[9:11], "little"), h4[11:]
        else:
            data += h4[9:]
        if len(data) >= length:
            whole.append(data)
        else:
            partial[key] = (length, data)
    return whole


main()
