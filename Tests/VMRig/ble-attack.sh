#!/usr/bin/env bash
# Issue 35's attacks over real kernel Bluetooth (make rig-attack): two keyed nearby-bridge
# processes on two kernel adapters (Debian kernel in a TCG VM, Bumble controllers on one
# simulated air) meet and bump while Bumble attackers on the same air (bumble_attackers.py, one
# host per kind) replay the rigs' adverts, replay a handshake message 1 (as a sniffer captures
# it), send garbage and keyless handshakes, and hold silent links, each as fast as its controller
# gets connections. For their first 12 s the rigs hear each other only through the replayer
# (vm-ble-attack.sh). Asserts: both rigs bump each other exactly once, with the other's card; no
# event names anyone but the two rigs; every line valid; each rig exits within 2 s of SIGTERM; no
# rig connected to the replayer (address binding); and every other attacker really reached the
# rigs (links and channels opened, message 1 replayed), so the test fails if the attack did not
# happen.
#
#   Tests/VMRig/ble-attack.sh [PYTHON-WITH-JSONSCHEMA]
#
# Environment: RIG_KEEP=DIR keeps the console log, the event streams and the attackers' report;
# ATTACK=none runs the same without attackers (the quiet-air reference of docs/TESTING.md).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
python=${1:-${NEARBY_BRIDGE_PYTHON:-$ROOT/.venv/bin/python3}}
work=${RIG_KEEP:-$(mktemp -d /tmp/nb-ble-attack.XXXXXX)}
mkdir -p "$work"
[ -n "${RIG_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL  $1" >&2; exit 1; }

echo "== building the release binary for the VM (static Swift runtime)" >&2
bin=$("$ROOT/scripts/build-release")
"$HERE/build-rig.sh" >&2
key=$(printf '35%.0s' $(seq 32))
printf '{"groupKey": "%s"}\n' "$key" >"$work/event.json"

attack=(--bumble-arg --attack=advertReplay,handshakeReplay,garbage,connectionFlood --bumble-arg "--attack-report=$work/attack.json"
  --bumble-arg "--attack-key=$key")
[ "${ATTACK:-}" = none ] && attack=()
"$HERE/run-vm.sh" --adapters 2 --timeout 300 --bumble-arg --le-mode=ext,legacy "${attack[@]+"${attack[@]}"}" \
  --file "$bin:/opt/rig/nearby-bridge" --file "$work/event.json:/opt/rig/event.json" \
  --file "$HERE/scenarios/attack-rigs.json:/opt/rig/attack-rigs.json" \
  --file "$HERE/scenarios/card-a.json:/opt/rig/card-a.json" \
  --file "$HERE/scenarios/card-b.json:/opt/rig/card-b.json" \
  -- "$HERE/vm-ble-attack.sh" | tee "$work/console.log" || fail "the VM run failed"

tr -d '\r' <"$work/console.log" | sed -n 's/^A| //p' >"$work/a.jsonl"
tr -d '\r' <"$work/console.log" | sed -n 's/^B| //p' >"$work/b.jsonl"
"$python" "$HERE/check_ble_attack.py" "$work" || fail "see above"
