#!/usr/bin/env python3
"""Host-side checks of ble-attack.sh's run (issue 35 over kernel Bluetooth).

    check_ble_attack.py WORK

WORK holds console.log (the VM's console), a.jsonl and b.jsonl (the rigs' event streams) and
attack.json (bumble_attackers.py's counts; none in a run without attackers: their checks are
skipped). Prints one line per check and a table of what the attackers did; exits 1 if any check
fails.
"""

from __future__ import annotations

import datetime
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOUCH_END = 33   # scenarios/attack-rigs.json: rig-b touches rig-a at 30-33 s


def main(work: Path) -> int:
    console = (work / "console.log").read_text(errors="replace").replace("\r", "")
    streams = {rig: [json.loads(line) for line in (work / f"{rig}.jsonl").read_text().splitlines() if line.strip()]
               for rig in ("a", "b")}
    attacked = (work / "attack.json").exists()
    report = json.loads((work / "attack.json").read_text()) if attacked else {"counts": {}}
    counts: dict[str, int] = report["counts"]
    world_start = int(re.search(r"VM: world starts at (\d+)", console).group(1))
    failures: list[str] = []

    def check(ok: bool, what: str) -> None:
        print(("ok    " if ok else "FAIL  ") + what, file=sys.stderr)
        if not ok:
            failures.append(what)

    valid = subprocess.run([sys.executable, str(ROOT / "scripts/validate-events.py"),
                            str(work / "a.jsonl"), str(work / "b.jsonl")]).returncode == 0
    check(valid, "every event line of both rigs is valid")

    nodes = {rig: {e["node"] for e in events if "node" in e} for rig, events in streams.items()}
    check(all(len(n) == 1 for n in nodes.values()), f"each rig has one node id ({nodes})")
    node = {rig: next(iter(n), None) for rig, n in nodes.items()}
    for rig, other, card in (("a", "b", {"booth": "B7", "name": "Rig B"}), ("b", "a", {"booth": "A1", "name": "Rig A"})):
        peers = {e["peer"] for e in streams[rig] if e.get("peer") is not None}
        check(peers == {node[other]}, f"rig-{rig}'s events name rig-{other} and nobody else (named: {sorted(peers)})")
        bumps = [e for e in streams[rig] if e["type"] == "bump"]
        check(len(bumps) == 1 and bumps[0]["peer"] == node[other] and bumps[0].get("card") == card,
              f"rig-{rig} bumped rig-{other} exactly once, with its card ({len(bumps)} bumps)")
        if bumps:
            at = datetime.datetime.fromisoformat(bumps[0]["ts"].replace("Z", "+00:00")).timestamp() - world_start
            # the touch is at 30-33 s of the world's time; its start second is whole-second rounded
            check(at <= TOUCH_END + 5, f"rig-{rig}'s bump came within 5 s of the touch's end ({at:.1f} s into the world)")
        exited = re.search(rf"VM: rig-{rig} exit status (\d+) after (\d+) ms", console)
        check(exited is not None and exited.group(1) == "0" and int(exited.group(2)) <= 2000,
              f"rig-{rig} exited cleanly within 2 s of SIGTERM ({exited.group(0) if exited else 'no exit line'})")
        check(f"VM: rig-{rig} still running" in console, f"rig-{rig} ran through the attack")

    if not attacked:
        return 1 if failures else 0

    def count(prefix: str) -> int:
        return sum(n for key, n in counts.items() if key.startswith(prefix))

    # Address binding (docs/PROTOCOL.md): the rigs' kernels advertise from addresses of the key
    # each derives, so the replayer's copies, from its own address, are dropped unheard.
    check(count("advertReplay: adverts replayed") >= 2, "advertReplay: replayed the rigs' adverts")
    check(count("advertReplay: links a rig opened") == 0 and not report["message 1 captured"],
          "advertReplay: no rig connected to a replayed advert (its address does not resolve with the rig's key)")
    connecting = ("handshakeReplay", "garbage", "connectionFlood")
    for kind in connecting:
        check(count(f"{kind}: channels opened") >= 1, f"{kind}: reached a rig's peer channel")
    # a silent link is held until the rig closes it (5 s), so the flood makes few; the others
    # make dozens in a run (61-84 in all in four runs)
    total = sum(count(f"{kind}: channels opened") for kind in connecting)
    check(total >= 10, f"the connecting attackers reached the rigs' peer channel at least 10 times ({total})")
    check(count("handshakeReplay: frames sent") >= 2, "handshakeReplay: replayed a message 1 (as a sniffer of a rig-to-rig link captures it)")
    died = [key for key in counts if "died" in key]
    check(not died, f"no attacker died ({died})")

    print("| attacker count | n |", file=sys.stderr)
    print("|---|---|", file=sys.stderr)
    for key in sorted(counts):
        print(f"| {key} | {counts[key]} |", file=sys.stderr)
    for line in re.findall(r"VM: (?:bumps after|rig-[ab] (?:cpu|links closed)).*", console):
        print("      " + line, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(Path(sys.argv[1])))
