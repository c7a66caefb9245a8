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
# The Swift runtime is linked in; libcurl is not (FoundationNetworking, which FlyingFox imports,
# needs it): the VM gets it with the binary's other shared libraries.
(cd "$ROOT" && swift build -c release --static-swift-stdlib -Xlinker -lcurl --product nearby-bridge --scratch-path "$ROOT/.build-vm/swift" >&2)
bin="$ROOT/.build-vm/swift/release/nearby-bridge"
"$HERE/build-rig.sh" >&2

# hci0 a BT 5-like controller (LE extended advertising: rig-a gets Add Extended Advertising
# Parameters/Data, the kernel the extended HCI commands), hci1 a BT 4.x-like one (legacy
# advertising: rig-b gets Add Advertising). rig-b is the one killed: on a legacy controller the
# kernel enforces the instance's timeout itself, so the killed rig leaves the air. (On an
# extended controller the kernel hands the timeout over as the advertising duration; with
# bumble_controllers.py honouring it, a killed rig-b there once stayed on the air for 30 s in
# CI: not understood yet, see Tests/VMRig/README.md.)
"$HERE/run-vm.sh" --adapters 2 --timeout 300 --bumble-arg --le-mode=ext,legacy --hci-log "$work/hci.log" \
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
# What reached each controller (the HCI log, independent of the bridge): C1 legacy advertising
# only; C0 the extended commands with our 100-150 ms interval (0xA0-0xF0 in 0.625 ms units) and
# legacy PDU properties 0x13 (connectable, scannable, legacy).
grep -q '\[C1\] host>ctrl CMD HCI_LE_SET_ADVERTISING_PARAMETERS_COMMAND' "$work/hci.log" || fail "C1: no legacy advertising"
grep -q '\[C1\] host>ctrl CMD HCI_LE_SET_EXTENDED_ADVERTISING' "$work/hci.log" && fail "C1 (legacy) got extended advertising commands"
grep -q '\[C0\] host>ctrl CMD HCI_LE_SET_EXTENDED_ADVERTISING_PARAMETERS_COMMAND 0x2036 ..1300a00000f00000' "$work/hci.log" ||
  fail "C0: no extended advertising parameters with legacy PDUs at 100-150 ms"
grep -q 'VM: rig-a advertising: extended' "$work/console.log" && grep -q 'VM: rig-b advertising: legacy' "$work/console.log" ||
  fail "the rigs did not say which advertising they chose"
echo "ok    rig-a on an extended controller (Add Extended Advertising, 100-150 ms, legacy PDUs), rig-b on a legacy one (Add Advertising); they found, ranged and bumped each other" >&2
