#!/usr/bin/env python3
"""Checks from a rig's event stream that every touch of one peer ended in a bump (issue 29).

    scripts/check-every-touch-bumps.py EVENTS.jsonl --peer NAME [--touches N] [--wait SECONDS]

A touch is a `near` of the peer named NAME (its advertised name, from `peer.found` or
`peer.named`). It is judged once the stream shows it over: at the peer's next `near` or `far`.
It passed if a `bump` with the peer came between the end of its approach (the last range beyond
`--approach-from` before the `near`) and that end: a bump may come just before its `near`, which
waits 300 ms for the filtered distance (under load, both can come out of one batch of ranges). The verdict depends
only on the order of events in the stream, never on wall-clock time, so a slow machine can make
the check wait longer but not change what it says.

A touch counts only if the rig had ranged the peer beyond `--approach-from` metres (1.0, the
near threshold) since the previous touch: a rig that joins the world in the middle of a touch
sees `near` without the approach, and whether that half gesture bumps is luck. Such a touch is
reported as skipped. So the events must include `range` lines (`run --ranges`).

With `--no-rssi`, every range of the peer must come without a received level (rssi null), so
that a board which does report one cannot pass for the no-RSSI path this check is about.

With `--wait`, the file is read again every 0.2 s until N touches have been judged (exit 0), a
judged touch had no bump (exit 1, at once) or SECONDS have passed (exit 1); a last line still
being written is ignored. Without it, the file is read once. Either way the last line on stderr
says what was seen: touches, bumps, and for each failed touch what the rig read meanwhile.
"""
import argparse
import json
import sys
import time


def read_events(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return []
    lines = text.split("\n")
    if lines and lines[-1] != "":
        lines = lines[:-1]  # still being written
    events = []
    for number, line in enumerate(lines, 1):
        if line.strip():
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise SystemExit(f"{path}:{number}: not JSON ({error}): {line[:120]}")
    return events


class Touch:
    def __init__(self, near):
        self.near = near
        self.bumps = []
        self.ranges = []
        self.end = None  # the `near` or `far` that closed it

    def describe(self):
        measured = [r for r in self.ranges if r.get("distance") is not None]
        if measured:
            closest = min(r["distance"] for r in measured)
            at_closest = [r for r in measured if r["distance"] == closest]
            levels = sorted({"none" if r.get("rssi") is None else str(r["rssi"]) for r in at_closest})
            # The filter overshoots on the approach; where it settles while the reading holds
            # still is the corrected reading the contact test weighed.
            settled = at_closest[-1].get("filtered")
            reading = f"the rig read down to {closest} m ({len(at_closest)} rounds, rssi {', '.join(levels)})" + (
                f", where the filtered distance settled at {settled:.3f} m" if settled is not None else ""
            )
        else:
            reading = "no range with a distance in between"
        end = f"{self.end['type']} at seq {self.end['seq']}" if self.end else "the end of the stream"
        return f"near at seq {self.near['seq']} ({self.near['ts']}): {len(self.bumps)} bump(s) from its approach to {end}; {reading}"


def judge(events, peer_name, approach_from):
    """Touches of the peer, split into judged (ended) ones, skipped ones and the one in progress."""
    peer_ids = {
        e["peer"] for e in events if e.get("type") in ("peer.found", "peer.named") and e.get("name") == peer_name
    }
    judged, skipped, current = [], [], None
    approached = False
    early = []  # bumps since the approach ended, before the touch's `near`
    bumps_seen = 0
    for e in events:
        if e.get("peer") not in peer_ids:
            continue
        kind = e.get("type")
        if kind == "range":
            if current:
                current.ranges.append(e)
            elif e.get("distance") is not None and e["distance"] > approach_from:
                approached = True
                early = []
        elif kind == "bump":
            bumps_seen += 1
            if current:
                current.bumps.append(e)
            else:
                early.append(e)
        elif kind in ("near", "far"):
            if current:
                current.end = e
                judged.append(current)
                current = None
            if kind == "near":
                touch = Touch(e)
                if approached:
                    touch.bumps = early
                    current = touch
                else:
                    skipped.append(touch)
                approached = False
            early = []
    return peer_ids, judged, skipped, current, bumps_seen


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("events")
    parser.add_argument("--peer", required=True, help="the peer's advertised name (peer.found / peer.named)")
    parser.add_argument("--touches", type=int, default=2, help="judged touches needed (default 2)")
    parser.add_argument("--wait", type=float, default=0, help="seconds to wait for them, reading the file as it grows")
    parser.add_argument("--no-rssi", action="store_true", help="fail if any range of the peer carries an rssi")
    parser.add_argument("--approach-from", type=float, default=1.0, help="metres the peer must be ranged beyond before a touch counts")
    args = parser.parse_args()

    deadline = time.monotonic() + args.wait
    while True:
        events = read_events(args.events)
        peer_ids, judged, skipped, current, bumps_seen = judge(events, args.peer, args.approach_from)
        failed = [t for t in judged if not t.bumps]
        with_level = [
            e for e in events if e.get("type") == "range" and e.get("peer") in peer_ids and e.get("rssi") is not None
        ] if args.no_rssi else []
        done = failed or with_level or len(judged) >= args.touches
        if done or time.monotonic() >= deadline:
            break
        time.sleep(0.2)

    summary = (
        f"peer {args.peer} ({', '.join(sorted(peer_ids)) or 'never found'}): "
        f"{len(judged)} whole touch(es) judged, {sum(1 for t in judged if t.bumps)} with a bump; "
        f"{bumps_seen} bump(s) in all; {len(skipped)} touch(es) skipped (no approach seen first)"
        + ("; one touch still in progress" if current else "")
    )
    if with_level:
        first = with_level[0]
        print(
            f"FAIL  the board reported a received level (rssi {first['rssi']} at seq {first['seq']}, "
            f"{len(with_level)} range(s) in all): this check needs a board that reports none; {summary}",
            file=sys.stderr,
        )
        return 1
    for touch in judged:
        print(("ok    " if touch.bumps else "FAIL  ") + "touch " + touch.describe(), file=sys.stderr)
    if failed:
        print(f"FAIL  {len(failed)} touch(es) without a bump; {summary}", file=sys.stderr)
        return 1
    if len(judged) < args.touches:
        waited = f" within {args.wait:g} s" if args.wait else ""
        print(f"FAIL  fewer than {args.touches} whole touches{waited}; {summary}", file=sys.stderr)
        if current:
            print(f"      in progress: touch {current.describe()}", file=sys.stderr)
        return 1
    print(f"ok    every touch bumped; {summary}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
