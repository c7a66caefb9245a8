#!/usr/bin/env bash
# Issue 4's acceptance test: two nearby-bridge processes on two real kernel Bluetooth adapters
# (Debian kernel in a TCG VM, each adapter backed by a Bumble controller, one simulated air)
# discover each other through mgmt, open the L2CAP channel, agree parameters, range against the
# world server, and each report exactly one bump with the other's card; then one is killed
# mid-run and the other reports it lost by timeout without hanging.
#
#   Tests/VMRig/ble-bump.sh PYTHON-WITH-JSONSCHEMA
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
python=$1
work=$(mktemp -d /tmp/nb-ble-vm.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL  $1" >&2; exit 1; }

echo "== building the release binary for the VM (static Swift runtime)" >&2
bin=$("$ROOT/scripts/build-release")
"$HERE/build-rig.sh" >&2

# hci0 a BT 4.x-like controller (legacy advertising: rig-a gets Add Advertising), hci1 a BT 5-like
# one (LE extended advertising: rig-b gets Add Extended Advertising Parameters/Data, the kernel
# the extended HCI commands). rig-b is the one killed, on the extended controller: there the
# kernel hands the instance's timeout to the controller as the set's duration and enables the
# set again, with the whole duration, whenever a connection to it ends, so the dead rig stays
# on the air for as long as rig-a keeps connecting (issue 34 item 3, Tests/VMRig/README.md).
"$HERE/run-vm.sh" --adapters 2 --timeout 300 --bumble-arg --le-mode=legacy,ext --hci-log "$work/hci.log" \
  --file "$bin:/opt/rig/nearby-bridge" \
  --file "$HERE/scenarios/two-rigs.json:/opt/rig/two-rigs.json" \
  --file "$HERE/scenarios/card-a.json:/opt/rig/card-a.json" \
  --file "$HERE/scenarios/card-b.json:/opt/rig/card-b.json" \
  -- "$HERE/vm-ble-bump.sh" | tee "$work/console.log" || fail "the VM run failed"

tr -d '\r' <"$work/console.log" | sed -n 's/^A| //p' >"$work/a.jsonl"
tr -d '\r' <"$work/console.log" | sed -n 's/^B| //p' >"$work/b.jsonl"
"$python" "$ROOT/scripts/validate-events.py" "$work/a.jsonl" "$work/b.jsonl" || fail "event schema"

count() { grep -c -- "$2" "$1" || true; }
[ "$(count "$work/a.jsonl" '"radio":"ble","state":"ready","backend":"hci0"')" = 1 ] || fail "rig-a: hci0 not ready"
[ "$(count "$work/b.jsonl" '"radio":"ble","state":"ready","backend":"hci1"')" = 1 ] || fail "rig-b: hci1 not ready"
grep -q '"type":"peer.found".*"name":"rig-b"' "$work/a.jsonl" || fail "rig-a did not find rig-b through mgmt"
grep -q '"type":"peer.found".*"name":"rig-a"' "$work/b.jsonl" || fail "rig-b did not find rig-a through mgmt"
[ "$(count "$work/a.jsonl" '"type":"bump".*"bump_id":1,')" = 1 ] || fail "rig-a: not exactly one bump for the first gesture"
[ "$(count "$work/b.jsonl" '"type":"bump".*"bump_id":1,')" = 1 ] || fail "rig-b: not exactly one bump for the first gesture"
[ "$(count "$work/a.jsonl" '"type":"bump".*"bump_id":2,')" -le 1 ] || fail "rig-a: more than one bump for the second gesture"
grep -q '"type":"bump".*"card":{"booth":"B7","name":"Rig B"}' "$work/a.jsonl" || fail "rig-a: bump without rig-b's card"
grep -q '"type":"bump".*"card":{"booth":"A1","name":"Rig A"}' "$work/b.jsonl" || fail "rig-b: bump without rig-a's card"
echo "ok    two kernel adapters: found each other, L2CAP channel, parameters, ranging, one bump each with the other's card" >&2
grep -q "VM: rig-b killed mid-exchange: profile drop" "$work/console.log" || fail "rig-b was not killed during a profile drop"
grep -q '"type":"peer.lost".*"reason":"timeout"' "$work/a.jsonl" || fail "rig-a did not time out the killed rig-b"
grep -q "VM: rig-a still running" "$work/console.log" || fail "rig-a died"
grep -q "VM: rig-a exit status 0" "$work/console.log" || fail "rig-a did not exit cleanly on SIGTERM"
echo "ok    rig-b killed mid-exchange: rig-a reported peer.lost (timeout), no hang, at most one bump, clean exit" >&2
# What reached each controller (the HCI log, independent of the bridge): C0 legacy advertising
# only; C1 the extended commands with our 100-150 ms interval (0xA0-0xF0 in 0.625 ms units) and
# legacy PDU properties 0x13 (connectable, scannable, legacy).
grep -q '\[C0\] host>ctrl CMD HCI_LE_SET_ADVERTISING_PARAMETERS_COMMAND' "$work/hci.log" || fail "C0: no legacy advertising"
grep -q '\[C0\] host>ctrl CMD HCI_LE_SET_EXTENDED_ADVERTISING' "$work/hci.log" && fail "C0 (legacy) got extended advertising commands"
grep -q '\[C1\] host>ctrl CMD HCI_LE_SET_EXTENDED_ADVERTISING_PARAMETERS_COMMAND 0x2036 ..1300a00000f00000' "$work/hci.log" ||
  fail "C1: no extended advertising parameters with legacy PDUs at 100-150 ms"
grep -q 'VM: rig-a advertising: legacy' "$work/console.log" && grep -q 'VM: rig-b advertising: extended' "$work/console.log" ||
  fail "the rigs did not say which advertising they chose"
echo "ok    rig-a on a legacy controller (Add Advertising), rig-b on an extended one (Add Extended Advertising, 100-150 ms, legacy PDUs); they found, ranged and bumped each other" >&2
# The killed rig left the air while rig-a still ran: its set ended by its duration (LE Advertising
# Set Terminated, status 0x3C) before rig-a's last scan disable (its stop); rig-a, the one that
# connects, tried the dead rig a few times only (before: about four times a second, each
# connection renewing the dead rig's advert), found rig-b once (the dead rig's advert found
# nobody again) and reported it lost within 15 s of the kill.
"$python" - "$work/hci.log" "$work/console.log" "$work/a.jsonl" <<'PY' || fail "the killed rig's advert (issue 34 item 3)"
import re, sys
hci = open(sys.argv[1]).read().splitlines()
expired = [i for i, l in enumerate(hci) if "[C1] ctrl>host EVT HCI_LE_ADVERTISING_SET_TERMINATED_EVENT 123c" in l]
stopped = [i for i, l in enumerate(hci) if re.search(r"\[C0\] host>ctrl CMD HCI_LE_SET_SCAN_ENABLE_COMMAND 0x200c 00", l, re.I)]
console = open(sys.argv[2], errors="replace").read()
lost_after = int(re.search(r"VM: phase 2 done after (\d+)s", console).group(1))
killed = re.search(r"VM: started \d+ time\(s\) until rig-b's peer id \(([0-9a-f]+)\)", console).group(1)
found = sum('"type":"peer.found"' in l and f'"peer":"{killed}"' in l for l in open(sys.argv[3]))
refused = int(re.search(r"VM: rig-a refused connects after the kill: (\d+)", console).group(1))
print(f"killed rig's set ended by its duration at HCI log line {expired[-1] if expired else None}, rig-a's stop at {stopped[-1] if stopped else None}; "
      f"lost {lost_after} s after the kill; {refused} refused connects; rig-b found {found} time(s)", file=sys.stderr)
sys.exit(0 if expired and stopped and expired[-1] < stopped[-1] and lost_after <= 15 and 1 <= refused <= 8 and found == 1 else 1)
PY
echo "ok    the killed rig on the extended controller left the air by its set's duration while rig-a ran; rig-a lost it within 15 s and did not find it again" >&2
