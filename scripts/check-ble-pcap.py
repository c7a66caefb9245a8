#!/usr/bin/env python3
"""Reads a capture's ble.pcap files with Wireshark (tshark) and checks what it decodes: a reading
that shares no code with nearby-bridge (issue 34, item 6; docs/PROTOCOL.md "Reading a capture").

  scripts/check-ble-pcap.py [--tshark CMD] [--psm-on-every-frame] [--phones] DIR|PCAP ...

Exit 1, with one line per problem, when a file holds no packets, or a frame is malformed or
carries expert info of severity warning or error, or:
- on a phone's GATT connection (handles 0x0E00-0x0EFF, `CapturingGATTBackend`): a Write
  Request not answered by one Write Response, or an ATT PDU before the MTU exchange;
- an LE Credit Based Connection Request (0x14) does not ask for LE PSM 0x0085 from CID 0x0040
  with MTU 1024, MPS 247 and 5 initial credits, or a Response (0x15) does not answer from CID
  0x0040 with the same MTU, MPS and credits and result 0; requests, responses and successful LE
  Connection Completes are not equal in number;
- on a handle, the credits one side's LE Flow Control Credits (0x16) give are not the K-frames
  it received (the capture renders the kernel returning what each SDU used);
- an HCI command is not answered by exactly one Command Status or Command Complete;
- over all files, no LE Create Connection, Disconnect, advertising or scan enable, or no L2CAP
  connection, credit or disconnection signalling is seen;
- with --psm-on-every-frame, a frame on CID 0x0040 is not tied to PSM 0x0085 by Wireshark
  (Wireshark 4.0 does so only for channels the capture's host asked for; 4.4 for all).
--phones also wants phones' GATT connections: their MTU exchange, writes, write responses and
notifications.
--tshark CMD runs CMD FILE TSHARK-ARGS... instead of tshark -r FILE TSHARK-ARGS... (scripts/test
uses `scripts/wireshark-uci --tshark`, Debian 13's tshark 4.4).
"""
import argparse
import collections
import pathlib
import shlex
import subprocess
import sys

FIELDS = [
    "frame.number", "hci_h4.direction", "bthci_acl.chandle", "btl2cap.cid", "btl2cap.cmd_code",
    "btl2cap.le_psm", "btl2cap.scid", "btl2cap.dcid", "btl2cap.option_mtu", "btl2cap.mps",
    "btl2cap.initial_credits", "btl2cap.credits", "btl2cap.le_result", "btl2cap.psm",
    "bthci_cmd.opcode", "bthci_evt.code", "bthci_evt.opcode", "bthci_evt.le_meta_subevent",
    "bthci_evt.status", "bthci_evt.connection_handle", "btatt.opcode", "_ws.malformed", "_ws.expert.severity",
    "_ws.expert.message",
]
WARNING = 0x600000


def rows(tshark, path):
    args = ["-n", "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a", "-E", "aggregator=|"]
    for field in FIELDS:
        args += ["-e", field]
    command = tshark + [str(path)] + args if tshark else ["tshark", "-r", str(path)] + args
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        values = line.split("\t")
        yield {f: (v.split("|") if v else []) for f, v in zip(FIELDS, values)}


def check(tshark, path, psm_everywhere, seen):
    problems = []
    frames = 0
    requests = responses = opened = 0
    commands = collections.Counter()
    answers = collections.Counter()
    kframes = collections.Counter()  # (handle, receiving side) -> K-frames
    credits = collections.Counter()  # (handle, side that gave) -> credits
    phones = 0  # phones' GATT connections: no credit-based channel
    writes = collections.Counter()  # handle -> Write Requests less Write Responses
    exchanged = set()  # phone handles whose MTU was exchanged
    for r in rows(tshark, path):
        frames += 1
        n = r["frame.number"][0]

        def problem(what):
            problems.append(f"check-ble-pcap: {path}: frame {n}: {what}")

        severities = [int(s, 0) for s in r["_ws.expert.severity"]]
        for severity, message in zip(severities, r["_ws.expert.message"]):
            if severity >= WARNING:
                problem(f"expert {'error' if severity >= 0x800000 else 'warning'}: {message}")
        if r["_ws.malformed"]:
            problem("malformed")
        sent = r["hci_h4.direction"] == ["0x00"]
        side = "host" if sent else "peer"
        other = "peer" if sent else "host"
        handle = (r["bthci_acl.chandle"] or [""])[0]
        for opcode in r["bthci_cmd.opcode"]:
            commands[opcode] += 1
            seen.add(f"command {opcode}")
        if r["bthci_evt.code"] and r["bthci_evt.code"][0] in ("0x0e", "0x0f"):
            answers.update(r["bthci_evt.opcode"])
        if r["bthci_evt.le_meta_subevent"] == ["0x01"] and r["bthci_evt.status"] == ["0x00"]:
            if 0x0E00 <= int((r["bthci_evt.connection_handle"] or ["0"])[0], 0) <= 0x0EFF:
                phones += 1
                seen.add("phone connection")
            else:
                opened += 1
        for opcode in r["btatt.opcode"]:
            seen.add(f"att {opcode}")
            if opcode in ("0x02", "0x03"):
                exchanged.add(handle)
            elif handle not in exchanged:
                problem(f"ATT opcode {opcode} before the MTU exchange")
            if opcode == "0x12":
                writes[handle] += 1
            elif opcode == "0x13":
                writes[handle] -= 1
        code = (r["btl2cap.cmd_code"] or [""])[0]
        if code:
            seen.add(f"signal {code}")
        if code == "0x14":
            requests += 1
            got = [r[f] for f in ("btl2cap.le_psm", "btl2cap.scid", "btl2cap.option_mtu", "btl2cap.mps", "btl2cap.initial_credits")]
            if got != [["0x0085"], ["0x0040"], ["1024"], ["247"], ["5"]]:
                problem(f"LE Credit Based Connection Request with PSM, SCID, MTU, MPS, credits {got}")
        elif code == "0x15":
            responses += 1
            got = [r[f] for f in ("btl2cap.dcid", "btl2cap.option_mtu", "btl2cap.mps", "btl2cap.initial_credits", "btl2cap.le_result")]
            if got != [["0x0040"], ["1024"], ["247"], ["5"], ["0x0000"]]:
                problem(f"LE Credit Based Connection Response with DCID, MTU, MPS, credits, result {got}")
        elif code == "0x16":
            credits[(handle, side)] += sum(int(c) for c in r["btl2cap.credits"])
        elif r["btl2cap.cid"] == ["0x0040"]:
            kframes[(handle, other)] += 1
            if psm_everywhere and r["btl2cap.psm"] != ["0x0085"]:
                problem(f"K-frame not tied to PSM 0x0085 (PSM {r['btl2cap.psm']})")
    if frames == 0:
        problems.append(f"check-ble-pcap: {path}: no packets")
    if not requests == responses == opened:
        problems.append(f"check-ble-pcap: {path}: {requests} connection requests, {responses} responses, {opened} LE connections")
    for key in set(kframes) | set(credits):
        if kframes[key] != credits[key]:
            handle, giver = key
            problems.append(f"check-ble-pcap: {path}: handle {handle}: the {giver} received {kframes[key]} K-frames and gave {credits[key]} credits")
    for handle, unanswered in writes.items():
        if unanswered:
            problems.append(f"check-ble-pcap: {path}: handle {handle}: {unanswered} Write Requests without their Write Response")
    for opcode in set(commands) | set(answers):
        if commands[opcode] != answers[opcode]:
            problems.append(f"check-ble-pcap: {path}: {commands[opcode]} commands {opcode}, {answers[opcode]} answered")
    print(f"check-ble-pcap: {path}: {frames} frames, {sum(commands.values())} commands, {requests} channels asked for, "
          f"{sum(kframes.values())} K-frames, {sum(credits.values())} credits, {phones} phone connections; "
          f"{len(problems) or 'no'} problems", file=sys.stderr)
    return problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tshark")
    parser.add_argument("--psm-on-every-frame", action="store_true")
    parser.add_argument("--phones", action="store_true")
    parser.add_argument("paths", nargs="+")
    options = parser.parse_args()
    tshark = shlex.split(options.tshark) if options.tshark else None
    files = []
    for arg in map(pathlib.Path, options.paths):
        files += sorted(arg.rglob("ble.pcap*")) if arg.is_dir() else [arg]
    problems, seen = [], set()
    for path in files:
        problems += check(tshark, path, options.psm_on_every_frame, seen)
    wanted = {"command 0x200d", "command 0x0406", "command 0x200a", "command 0x200c", "command 0x2008",
              "signal 0x14", "signal 0x15", "signal 0x16", "signal 0x06", "signal 0x07"}
    if options.phones:
        wanted |= {"phone connection", "att 0x02", "att 0x03", "att 0x12", "att 0x13", "att 0x1b"}
    if wanted - seen:
        problems.append(f"check-ble-pcap: nowhere in {' '.join(options.paths)}: {', '.join(sorted(wanted - seen))}")
    for line in problems[:40]:
        print(line, file=sys.stderr)
    sys.exit(1 if problems else 0)


main()
