#!/usr/bin/env bash
# Issue 8's hardware rig without hardware: two complete rigs on a real Linux kernel (Debian 12's,
# in a TCG VM), each `nearby-bridge run --uwb usb:SERIAL --ble hciN` with
#   - its own UWB board on real USB: a FunctionFS gadget on its own dummy_hcd UDC, with
#     DWM3001CDK-like descriptors, enumerated by usbcore and driven by our libusb code through
#     usbfs; uwb_gadget serves it from the world server's virtual UWBS for that body, so both
#     boards share one virtual world (positions, scripted motion, ranging noise);
#   - its own kernel Bluetooth adapter (hci_uart + a Bumble controller on the host; both
#     controllers on one simulated air).
# Both rigs share an event key (`keygen`, `groupKeyFile`): peer protocol v2. Scenario: approach,
# bump, separate; then faults: unplug/replug rig-a's board, power-cycle rig-b's adapter, drop
# rig-a's controller link, kill -9 rig-b, run an outsider with another key in its place, restart
# rig-b. See vm-two-rigs.sh and check_two_rigs.py for what is asserted; every capture is then
# searched for STS values, cards and keys on the air (scripts/check-capture-secrets.py), and
# every UCI capture is decoded by Wireshark's UCI dissector (scripts/wireshark-uci). rig-b's
# board speaks UCI 1.1, rig-a's UCI 2.0 (scenarios/two-rigs-usb.json).
# Debian's bluetoothd runs on both adapters throughout, as on a Pi, and between the scenario and
# the faults it discovers, advertises and powers rig-a's adapter off and on itself; the same
# checks hold. --no-bluetoothd runs the rig without it (the reference the streams are compared
# with: README.md, "bluetoothd").
#
#   Tests/VMRig/two-rigs.sh [--no-bluetoothd] [PYTHON-WITH-JSONSCHEMA]      (make rig)
#
# Environment: RIG_KEEP=DIR keeps the console log, the decoded event streams and, in DIR/diag,
# each rig's capture (uci.pcap, ble.pcap: `--capture`) and stderr.
set -euo pipefail
bluetoothd=1
[ "${1:-}" = --no-bluetoothd ] && { bluetoothd=0; shift; }
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
python=${1:-${NEARBY_BRIDGE_PYTHON:-$ROOT/.venv/bin/python3}}
[ -x "$python" ] || { echo "two-rigs: $python not found (scripts/bootstrap --python makes .venv)" >&2; exit 2; }
work=${RIG_KEEP:-$(mktemp -d /tmp/nb-two-rigs.XXXXXX)}
mkdir -p "$work"
[ -n "${RIG_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL  $1" >&2; exit 1; }
start=$(date +%s)

echo "== building the release binary for the VM (static Swift runtime)" >&2
bin=$("$ROOT/scripts/build-release")
"$HERE/build-rig.sh" >&2
built=$(date +%s)
# The event's key, and another event's for the outsider; the key files are given through a
# config file, as a rig's systemd unit does.
"$bin" keygen --output "$work/event.key"
"$bin" keygen --output "$work/other.key"
printf '{"groupKeyFile": "/opt/rig/event.key"}\n' >"$work/event.json"
printf '{"groupKeyFile": "/opt/rig/other.key"}\n' >"$work/other.json"
printf '{}\n' >"$work/open.json"   # no event key: peer protocol v1 in clear, no LE privacy

# hci0, rig-a's, is a dual-mode controller (BR/EDR and LE with legacy advertising, like a Pi
# 4/5's): the kernel initialises BR/EDR on it, bluetoothd runs its BR/EDR side, and bluetoothd's
# discovery there (btd-scan) is interleaved, LE scanning then inquiry, beside the rig's own LE
# discovery (issue 34 item 4). hci1, rig-b's, is an LE-only BT 4.x-like one.
echo "== the VM: two boards on dummy_hcd, two adapters on Bumble, two bridges" >&2
status=0
with=(); script_args=()
[ "$bluetoothd" = 1 ] && { with=(--bluetoothd); script_args=(bluetoothd); }
"$HERE/run-vm.sh" --adapters 2 --timeout 480 --bumble-arg --le-mode=dual,legacy --hci-log "$work/hci.log" "${with[@]+"${with[@]}"}" \
  --module dummy_hcd --module libcomposite --module usb_f_fs \
  --file "$bin:/opt/rig/nearby-bridge" \
  --file "$HERE/scenarios/two-rigs-usb.json:/opt/rig/two-rigs-usb.json" \
  --file "$HERE/scenarios/card-a.json:/opt/rig/card-a.json" \
  --file "$HERE/scenarios/card-b.json:/opt/rig/card-b.json" \
  --file "$work/event.key:/opt/rig/event.key" --file "$work/other.key:/opt/rig/other.key" \
  --file "$work/event.json:/opt/rig/event.json" --file "$work/other.json:/opt/rig/other.json" \
  --file "$work/open.json:/opt/rig/open.json" \
  -- "$HERE/vm-two-rigs.sh" "${script_args[@]+"${script_args[@]}"}" >"$work/console.log" || status=$?
# the console without the encoded streams (they are shown decoded below)
grep -avE '^VM-(B|D)64\| ' "$work/console.log" >&2 || true
[ "$status" = 0 ] || fail "the VM run failed (status $status)"

"$python" "$HERE/check_two_rigs.py" "$work/console.log" "$work" "$HERE/scenarios/card-a.json" "$HERE/scenarios/card-b.json" \
  $([ "$bluetoothd" = 1 ] && echo --bluetoothd)
streams=("$work"/{a,b,c,d}.jsonl); [ "$bluetoothd" = 1 ] && streams+=("$work"/{e,f}.jsonl)
"$python" "$ROOT/scripts/validate-events.py" "${streams[@]}" \
  || fail "an event line is not valid (schema, JSON, or not newline-terminated)"
echo "ok    every line of the ${#streams[@]} streams is complete, newline-terminated JSON that validates against the schema" >&2
for rig in a b c d; do   # (e and f run open: their cards go in clear, as v1 peers' do)
  # the outsider (d) never ranged: no STS values to look for, only keys and cards
  "$python" "$ROOT/scripts/check-capture-secrets.py" "$work/diag/cap-$rig" --card "$HERE/scenarios/card-a.json" \
    --card "$HERE/scenarios/card-b.json" --log "$work/diag/$rig.err" $([ $rig = d ] && echo --no-sessions) \
    || fail "rig $rig's capture holds secrets"
done
echo "ok    no STS value, card or key in any rig's ble.pcap; no key in its events, logs or UCI capture; secrets.json 0600" >&2
# Every UCI packet the rigs' runs exchanged with the USB boards, through Wireshark's dissector.
"$ROOT/scripts/wireshark-uci" "$work"/diag/cap-* || fail "Wireshark's UCI dissector rejects a packet in a rig's uci.pcap (above)"
echo "ok    every packet of every rig's uci.pcap decodes as one well-formed UCI packet in Wireshark 4.4" >&2
echo "two-rigs: passed ($([ "$bluetoothd" = 1 ] && echo "with bluetoothd" || echo "without bluetoothd")) in $(( $(date +%s) - start )) s (build check $(( built - start )) s, VM $(( $(date +%s) - built )) s)" >&2
