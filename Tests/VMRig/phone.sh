#!/usr/bin/env bash
# Issue 33's VM acceptance: an iPhone (a Bumble host running Apple's accessory message flow,
# bumble_iphone.py) completes the exchange with `nearby-bridge run` over the real kernel's LE
# stack: beside bluetoothd (the D-Bus GATT backend, found by bluetoothd's advertisement naming the
# NI service) or, with --no-bluetoothd, without it (the rig's own ATT server, found by its peer
# advert). Checked: every step of the phone's flow (0x0A -> 0x01, 0x0B -> 0x02, 0x0C -> 0x03);
# the rig's events (the phone found as an iOS phone, then lost, peer-ended, when it left; the
# schema); its capture: the board got exactly the TLVs AOSP's mapping makes of the phone's blob
# (scripts/check-phone-capture.py); and rig-b, on the second adapter, bumps the rig meanwhile,
# both sides. About 1 min each.
#
# Issue 31's, with --android: an Android phone (bumble_android.py: the ranging OOB exchange,
# capability -> configuration -> Configuration Response -> Stop Ranging -> its response, spec
# version 3 beside bluetoothd and 1 without it) against the rig serving "android-oob" first
# (scenarios/android-config.json, so bluetoothd advertises the OOB service); the same checks, the
# phone found as an Android phone, check-phone-capture.py --android 1.
#
#   Tests/VMRig/phone.sh PYTHON-WITH-JSONSCHEMA [--no-bluetoothd] [--android]
# RIG_KEEP=1 keeps the work directory (console, events, capture) for a look.
# RIG_BINARY=PATH runs that nearby-bridge instead of a fresh release build (e.g. the debug one:
# the VM gets its shared libraries too).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
python=$1
shift
mode=bluetoothd btd=(--bluetoothd) platform=ios
for arg; do
  case $arg in
    --no-bluetoothd) mode=kernel btd=() ;;
    --android) platform=android ;;
    *) echo "phone.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d /tmp/nb-phone-vm.XXXXXX)
[ -n "${RIG_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL  $1" >&2; exit 1; }
if [ $platform = ios ]; then
  who="the iPhone" find=ni config=phone-config.json capture=(--phones 1)
  [ $mode = kernel ] && find=rig
  phone_args=(--bumble-arg "--iphone=$work/phone.json" --bumble-arg "--iphone-find=$find")
  steps='["found","connected","configuration","configured","started","stopped","disconnected"]'
  flow="0x0A -> 0x01, 0x0B -> 0x02 (ranging), 0x0C -> 0x03"
else
  who="the Android phone" find=oob version=3 config=android-config.json capture=(--android 1)
  [ $mode = kernel ] && find=rig version=1
  phone_args=(--bumble-arg "--android=$work/phone.json" --bumble-arg "--android-find=$find" --bumble-arg "--android-version=$version")
  steps='["found","connected","capability","configuration","configured","stopped","disconnected"]'
  flow="v$version: capability request -> response, configuration -> response (ranging), stop -> response"
fi

bin=${RIG_BINARY:-$("$ROOT/scripts/build-release")}
"$HERE/build-rig.sh" >&2
"$HERE/run-vm.sh" --adapters 2 --timeout 420 "${btd[@]}" "${phone_args[@]}" \
  --file "$bin:/opt/rig/nearby-bridge" \
  --file "$HERE/scenarios/phone-rig.json:/opt/rig/phone-rig.json" \
  --file "$HERE/scenarios/$config:/opt/rig/phone-config.json" \
  -- "$HERE/vm-phone.sh" "$mode" | tr -d '\r' >"$work/console.log" || { tail -n 60 "$work/console.log" >&2; fail "the VM run failed"; }

sed -n 's/^A| //p' "$work/console.log" >"$work/a.jsonl"
sed -n 's/^B| //p' "$work/console.log" >"$work/b.jsonl"
mkdir -p "$work/cap/rig"
sed -n 's/^U| //p' "$work/console.log" | base64 -d >"$work/cap/rig/uci.pcap"
sed -n 's/^H| //p' "$work/console.log" | base64 -d >"$work/cap/rig/ble.pcap"
show() { grep -E '^(VM|E|BTD)' "$work/console.log" | tail -n 40 >&2; cat "$work/phone.json" >&2 2>/dev/null || true; }
[ -f "$work/phone.json" ] || { show; fail "$who wrote no report"; }
reached=$(jq -c .steps "$work/phone.json")
[ "$reached" = "$steps" ] || { show; fail "$who's flow stopped: $reached $(jq -r '.error // ""' "$work/phone.json")"; }
echo "ok    $who ($mode): found the rig ($find advert), MTU $(jq .mtu "$work/phone.json"), $flow, disconnected" >&2
"$python" "$ROOT/scripts/validate-events.py" "$work/a.jsonl" "$work/b.jsonl" || fail "event schema"
phone=$(jq -r --arg platform $platform 'select(.type == "peer.found" and .kind == "phone" and .platform == $platform) | .peer' "$work/a.jsonl" | head -1)
[ -n "$phone" ] || { show; fail "the rig reported no phone"; }
jq -se --arg p "$phone" 'any(.[]; .type == "peer.lost" and .peer == $p and .reason == "peer-ended")' "$work/a.jsonl" >/dev/null || { show; fail "the rig did not end the phone's session"; }
# Lost when the phone went, not at the rig's stop (the VM waits up to 240 s for it): over D-Bus
# only bluetoothd's Device1.Connected tells the rig.
seconds=$(sed -n 's/^VM: phone [0-9a-f]* after \([0-9]*\)s$/\1/p' "$work/console.log")  # "never": empty
[ -n "$seconds" ] && [ "$seconds" -lt 200 ] || { show; fail "the rig did not lose the phone when it left (VM: $(grep 'VM: phone' "$work/console.log"))"; }
grep -q "VM: rig exit status 0" "$work/console.log" || fail "the rig did not exit cleanly"
echo "ok    the rig: peer.found (kind phone, platform $platform), peer.lost (peer-ended) after the phone's stop, clean exit ($(grep -o 'VM: phone .*' "$work/console.log"))" >&2
"$ROOT/scripts/check-phone-capture.py" "$work/cap/rig" "${capture[@]}" || fail "the board's session does not match the phone's configuration"
echo "ok    the rig's board got exactly the TLVs the phone's configuration maps to (check-phone-capture.py ${capture[*]})" >&2
jq -se 'any(.[]; .type == "bump" and .kind == null and .card.name == "rig-b")' "$work/a.jsonl" >/dev/null || { show; fail "the rig did not bump rig-b"; }
jq -se 'any(.[]; .type == "bump" and .card.name == "rig")' "$work/b.jsonl" >/dev/null || { show; fail "rig-b did not bump the rig"; }
grep -q "VM: rig-b exit status 0" "$work/console.log" || fail "rig-b did not exit cleanly"
echo "ok    rig-b bumped the rig meanwhile, both sides with the other's card ($(grep -o 'VM: rigs and phone done .*' "$work/console.log"))" >&2
