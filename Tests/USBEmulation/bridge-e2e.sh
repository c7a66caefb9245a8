#!/usr/bin/env bash
# nearby-bridge's real libusb code path against the emulated DWM3001CDK (emulated_board.py),
# whose bulk endpoints are served by a `nearby-bridge world` virtual UWBS, with the world's
# virtual air for Bluetooth. Checks: board absent, permission denied, `devices`, ranging and a
# bump from the board's notifications, unplug -> `device removed`, replug -> ranging resumes,
# garbage on the wire, clean exit on SIGTERM, every stdout line valid against the schema; then
# the same board through a serial port (a pty) with `--uwb /path/to/tty`; a UCI 1.1 board; and
# boards without RSSI, which must bump at every steady 3 cm touch (issue 29).
#
#   Tests/USBEmulation/bridge-e2e.sh PATH/TO/nearby-bridge PYTHON-WITH-JSONSCHEMA
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(realpath "$1")
python=$2
emu=(/usr/bin/python3 "$ROOT/Tests/USBEmulation/emulated_board.py")
work=$(mktemp -d /tmp/nb-usb-e2e.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

fail() { echo "FAIL  $1" >&2; for f in "${@:2}"; do echo "--- $f" >&2; tail -n 30 "$f" >&2; done; exit 1; }
pass() { echo "ok    $1" >&2; }
# wait_for FILE PATTERN SECONDS [AFTER-LINE]: a line matching PATTERN after line AFTER-LINE.
wait_for() {
  local deadline=$((SECONDS + $3))
  while ((SECONDS < deadline)); do
    tail -n +"$((${4:-0} + 1))" "$1" 2>/dev/null | grep -q -- "$2" && return 0
    sleep 0.1
  done
  return 1
}
line_of() { grep -n -- "$2" "$1" | tail -1 | cut -d: -f1; }
# stop PID LOG: SIGTERM, then at most 10 s for the process to end (a lost signal must fail the
# check, not hang it); sets $status to its exit status.
stop() {
  kill -TERM "$1"
  for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$1" 2>/dev/null && { kill -KILL "$1"; fail "still running 10 s after SIGTERM" "$2"; }
  status=0; wait "$1" || status=$?
}

# 1. No board at all.
if "$bin" run --uwb usb --ble world:127.0.0.1:9/none >"$work/absent.out" 2>"$work/absent.err"; then
  fail "absent board: run succeeded" "$work/absent.err"
fi
grep -q "no UWB board on USB" "$work/absent.err" || fail "absent board: unclear error" "$work/absent.err"
[ ! -s "$work/absent.out" ] || fail "absent board: something reached stdout" "$work/absent.out"
pass "absent board: clear error, nothing on stdout"

# A world whose external node 'field-rig' is served on a UCI port and the virtual air, where
# Alice comes to touch it every 10 s: the bump check below does not depend on how long the
# steps before it took (a rig that joined during the built-in world's single touch once
# ranged and saw `near`, but too little of the touch to call it a bump).
"$bin" world --scenario "$ROOT/Tests/Scenarios/alice-touches.json" --speed 2 --uwb-port 0 --air-port 0 --log-level info \
  >"$work/world.jsonl" 2>"$work/world.err" &
world=$!
wait_for "$work/world.err" "nearby-bridge run" 30 || fail "world server did not start" "$work/world.err"
uwb=$(grep -o "tcp:[0-9.]*:[0-9]*" "$work/world.err" | head -1)
ble=$(grep -o "world:[0-9.]*:[0-9]*/field-rig" "$work/world.err" | head -1)

# 2. devices: the board, its ids, cdc_acm, and what the board answers over UCI.
"${emu[@]}" --uci "${uwb#tcp:}" -- "$bin" devices >"$work/devices.txt" 2>"$work/devices.err" || fail "devices" "$work/devices.err"
for expected in "1915:520f" "nRF52 USB Product" "serial 0123456789AB" "kernel driver: cdc_acm" "access: yes" "UCI 2.0.0" "vendor data 4e425657"; do
  grep -q -- "$expected" "$work/devices.txt" || fail "devices: missing '$expected'" "$work/devices.txt"
done
pass "devices lists the board with cdc_acm and its UCI device info"

# 3. Permission denied: a clear error that names the fix.
"${emu[@]}" --uci "${uwb#tcp:}" --node-mode 0000 -- "$bin" devices >"$work/denied.txt" 2>&1 || true
grep -q "access: no .*LIBUSB_ERROR_ACCESS.*udev/70-nearby-bridge.rules" "$work/denied.txt" || fail "denied: devices" "$work/denied.txt"
if "${emu[@]}" --uci "${uwb#tcp:}" --node-mode 0000 -- "$bin" run --uwb usb --ble "$ble" >"$work/denied.out" 2>"$work/denied.err"; then
  fail "denied: run succeeded" "$work/denied.err"
fi
grep -q "permission denied" "$work/denied.err" || fail "denied: run error" "$work/denied.err"
pass "permission denied: devices and run say so and point at the udev rules"

# 3b. doctor: the board is fine; without permission it says which fix applies.
"${emu[@]}" --uci "${uwb#tcp:}" -- "$bin" doctor >"$work/doctor.txt" 2>&1 || true
grep -q "^ok    UWB board usb:1-1: 1915:520f" "$work/doctor.txt" || fail "doctor: board" "$work/doctor.txt"
grep -q "^ok    UWB board usb:1-1 UCI: answers UCI 2.0.0" "$work/doctor.txt" || fail "doctor: UCI" "$work/doctor.txt"
"${emu[@]}" --uci "${uwb#tcp:}" --node-mode 0000 -- "$bin" doctor >"$work/doctor-denied.txt" 2>&1 && fail "doctor: exit 0 despite a failure" "$work/doctor-denied.txt"
grep -q "^fail  UWB board usb:1-1: .*cannot be opened: LIBUSB_ERROR_ACCESS" "$work/doctor-denied.txt" || fail "doctor: denied" "$work/doctor-denied.txt"
grep -q "fix: install the udev rules .* usermod -aG nearby" "$work/doctor-denied.txt" || fail "doctor: denied fix" "$work/doctor-denied.txt"
pass "doctor: board and UCI ok; without permission: fail with the udev/group fix, exit status 1"

# 3c. doctor --config: a board without a filed offset is warned about (with the calibrate fix); with one, ok.
serial=0123456789AB  # emulated_board.py's default
echo '{"uwb": "usb"}' >"$work/uncalibrated.json"
"${emu[@]}" --uci "${uwb#tcp:}" -- "$bin" doctor --config "$work/uncalibrated.json" >"$work/doctor-uncal.txt" 2>&1 || true
grep -q "^warn  UWB board usb:1-1 calibration: board $serial has no offset in $work/uncalibrated.json" "$work/doctor-uncal.txt" ||
  fail "doctor: uncalibrated warning" "$work/doctor-uncal.txt"
grep -q "fix: nearby-bridge calibrate --config $work/uncalibrated.json" "$work/doctor-uncal.txt" || fail "doctor: calibrate fix" "$work/doctor-uncal.txt"
echo "{\"uwb\": \"usb\", \"calibration\": {\"$serial\": {\"offset\": 0.042}}}" >"$work/calibrated.json"
"${emu[@]}" --uci "${uwb#tcp:}" -- "$bin" doctor --config "$work/calibrated.json" >"$work/doctor-cal.txt" 2>&1 || true
grep -q "^ok    UWB board usb:1-1 calibration: board $serial has an offset" "$work/doctor-cal.txt" || fail "doctor: calibrated" "$work/doctor-cal.txt"
pass "doctor --config: warns about a board without a calibrated offset and names calibrate; ok once it is filed"

# 4. Ranging from the board's notifications, unplug, replug, garbage, SIGTERM.
"${emu[@]}" --uci "${uwb#tcp:}" --control "$work/ctl" --log "$work/emu.log" -- \
  "$bin" run --uwb usb --ble "$ble" --name field-rig --ranges --log-level info >"$work/run.jsonl" 2>"$work/run.err" &
run=$!
ctl() { "${emu[@]}" ctl "$work/ctl" "$@" >>"$work/ctl.log" 2>&1 || fail "control $*" "$work/ctl.log" "$work/emu.log"; }
wait_for "$work/run.jsonl" '"status":"OK"' 20 || fail "no ranges over USB" "$work/run.err" "$work/emu.log"
wait_for "$work/run.jsonl" '"type":"near"' 20 || fail "no near event" "$work/run.err"
wait_for "$work/run.jsonl" '"type":"bump".*"card":{"name":"Alice"}' 20 || fail "no bump with Alice" "$work/run.err"
pass "ranges, near and a bump from the emulated board's notifications"

ctl unplug
wait_for "$work/run.jsonl" '"radio":"uwb","state":"removed"' 10 || fail "unplug not reported" "$work/run.err"
removed=$(line_of "$work/run.jsonl" '"state":"removed"')
ctl replug
wait_for "$work/run.jsonl" '"radio":"uwb","state":"ready","backend":"usb:' 10 "$removed" || fail "replug not reported" "$work/run.err"
ready=$(line_of "$work/run.jsonl" '"radio":"uwb","state":"ready"')
wait_for "$work/run.jsonl" '"status":"OK"' 10 "$ready" || fail "ranging did not resume after replug" "$work/run.err"
pass "unplug reported, process stayed up, ranging resumed after replug"

ctl garbage 300
resumed=$(wc -l <"$work/run.jsonl")
wait_for "$work/run.jsonl" '"status":"OK"' 10 "$resumed" || fail "ranging stopped after garbage" "$work/run.err"
grep -q "UCI stream error" "$work/run.err" || fail "garbage was not noticed" "$work/run.err"
pass "garbage on the wire skipped, ranging continued"

stop "$run" "$work/run.err"
[ "$status" -eq 0 ] || fail "run exited with $status after SIGTERM" "$work/run.err"
"$python" "$ROOT/scripts/validate-events.py" "$work/run.jsonl" || fail "schema" "$work/run.jsonl"
grep -q "peer.lost" "$work/run.jsonl" && fail "a peer was lost while the board was away" "$work/run.jsonl"
pass "clean exit on SIGTERM; every line valid; no peer lost during the outage"

# 5. The tty transport: the board's UCI through a pseudo-terminal left in cooked mode.
/usr/bin/python3 "$ROOT/Tests/USBEmulation/tty_bridge.py" "${uwb#tcp:}" "$work/ttyUWB" 2>"$work/tty.err" &
wait_for "$work/tty.err" "tty_bridge:" 5 || fail "tty bridge did not start" "$work/tty.err"
"$bin" run --uwb "$work/ttyUWB" --ble "$ble" --name field-rig --ranges >"$work/tty.jsonl" 2>"$work/tty-run.err" &
tty_run=$!
wait_for "$work/tty.jsonl" '"radio":"uwb","state":"ready","backend":"'"$work"'/ttyUWB"' 10 || fail "tty: board not ready" "$work/tty-run.err"
wait_for "$work/tty.jsonl" '"status":"OK"' 20 || fail "tty: no ranges" "$work/tty-run.err"
stop "$tty_run" "$work/tty-run.err"
[ "$status" -eq 0 ] || fail "tty: exited with $status after SIGTERM" "$work/tty-run.err"
"$python" "$ROOT/scripts/validate-events.py" "$work/tty.jsonl" || fail "tty: schema" "$work/tty.jsonl"
pass "the same UCI through a serial port (raw mode set by nearby-bridge): ranges"

# 6. A UCI 1.1 board on the same USB path: the world serves field-rig's board as UCI 1.1
# (session id as token, status-only SESSION_INIT_RSP, 1.x capability numbering, no RSSI); Alice's
# board stays on 2.0. Ranges and a bump with Alice; the capture shows the host spoke 1.1.
kill "$world"
jq '.nodes[0].uci = "1.1"' "$ROOT/Tests/Scenarios/alice-touches.json" >"$work/alice-touches-uci11.json"
"$bin" world --scenario "$work/alice-touches-uci11.json" --speed 2 --uwb-port 0 --air-port 0 --log-level info \
  >"$work/world11.jsonl" 2>"$work/world11.err" &
wait_for "$work/world11.err" "nearby-bridge run" 30 || fail "UCI 1.1 world server did not start" "$work/world11.err"
uwb11=$(grep -o "tcp:[0-9.]*:[0-9]*" "$work/world11.err" | head -1)
ble11=$(grep -o "world:[0-9.]*:[0-9]*/field-rig" "$work/world11.err" | head -1)
"${emu[@]}" --uci "${uwb11#tcp:}" -- "$bin" devices >"$work/devices11.txt" 2>&1 || fail "UCI 1.1: devices" "$work/devices11.txt"
grep -q "UCI 1.1.0" "$work/devices11.txt" || fail "UCI 1.1: devices does not show UCI 1.1.0" "$work/devices11.txt"
"${emu[@]}" --uci "${uwb11#tcp:}" -- "$bin" run --uwb usb --ble "$ble11" --name field-rig --ranges --capture "$work/capture11" \
  >"$work/run11.jsonl" 2>"$work/run11.err" &
run11=$!
wait_for "$work/run11.jsonl" '"status":"OK"' 20 || fail "UCI 1.1: no ranges over USB" "$work/run11.err"
wait_for "$work/run11.jsonl" '"type":"bump".*"card":{"name":"Alice"}' 30 || fail "UCI 1.1: no bump with Alice" "$work/run11.err"
stop "$run11" "$work/run11.err"
[ "$status" -eq 0 ] || fail "UCI 1.1: run exited with $status after SIGTERM" "$work/run11.err"
grep -q '"radio":"uwb","state":"ready".*"uci":"1.1.0"' "$work/run11.jsonl" || fail "UCI 1.1: device event" "$work/run11.jsonl"
"$python" "$ROOT/scripts/validate-events.py" "$work/run11.jsonl" || fail "UCI 1.1: schema" "$work/run11.jsonl"
"$ROOT/scripts/check-uci-pcap.py" "$work/capture11/field-rig/uci.pcap" 2>"$work/check11.txt" || fail "UCI 1.1: capture" "$work/check11.txt"
grep -q "UCI 1.x numbering" "$work/check11.txt" || fail "UCI 1.1: the capture's caps were not read as 1.x" "$work/check11.txt"
pass "a UCI 1.1 board over USB: ranges and a bump with a UCI 2.0 peer; its capture checks as UCI 1.x"

# The same UCI 1.1 board straight over TCP (`--uwb tcp:`, as a pica-style emulator is reached).
"$bin" run --uwb "$uwb11" --ble "$ble11" --name field-rig --ranges >"$work/tcp11.jsonl" 2>"$work/tcp11.err" &
tcp11=$!
wait_for "$work/tcp11.jsonl" '"radio":"uwb","state":"ready".*"uci":"1.1.0"' 20 || fail "UCI 1.1 over TCP: board not ready" "$work/tcp11.err"
wait_for "$work/tcp11.jsonl" '"type":"bump".*"card":{"name":"Alice"}' 30 || fail "UCI 1.1 over TCP: no bump with Alice" "$work/tcp11.err"
stop "$tcp11" "$work/tcp11.err"
[ "$status" -eq 0 ] || fail "UCI 1.1 over TCP: run exited with $status after SIGTERM" "$work/tcp11.err"
pass "the UCI 1.1 board over TCP: ranges and a bump"

# 7. Boards without RSSI on the same USB path (issue 29, "every board bumps"): the UCI 1.1 board
# and a UCI 2.0 board whose firmware ignores RSSI_REPORTING (RSSI octet 0), side by side, each in
# a world of its own from Tests/Scenarios/steady-touch.json: an exact radio, so the board reads
# 3 cm while Alice holds still against it for 2 s, every 18 s (9 s at --speed 2). Each touch is
# judged by the event stream alone (a near, then a bump before her next far or near; a touch the
# rig joined halfway is skipped); the check stops at the first touch without a bump, and two must
# bump (about 20 s).
steady_touch() {  # NAME JQ-FILTER: a world with the rig's board so changed, `run --uwb usb` on it, the check
  local dir="$work/steady-$1" verdict=0
  mkdir -p "$dir"
  jq "$2" "$ROOT/Tests/Scenarios/steady-touch.json" >"$dir/scenario.json"
  timeout --foreground 90 "$bin" world --scenario "$dir/scenario.json" --speed 2 --uwb-port 0 --air-port 0 --log-level info \
    >/dev/null 2>"$dir/world.err" &
  local world=$!
  wait_for "$dir/world.err" "nearby-bridge run" 30 || { echo "the world did not start" >"$dir/check.txt"; kill "$world"; return 1; }
  local uwb ble
  uwb=$(grep -o "tcp:[0-9.]*:[0-9]*" "$dir/world.err" | head -1)
  ble=$(grep -o "world:[0-9.]*:[0-9]*/field-rig" "$dir/world.err" | head -1)
  timeout --foreground 60 "${emu[@]}" --uci "${uwb#tcp:}" -- "$bin" run --uwb usb --ble "$ble" --name field-rig --ranges \
    >"$dir/run.jsonl" 2>"$dir/run.err" &
  local run=$!
  "$python" "$ROOT/scripts/check-every-touch-bumps.py" "$dir/run.jsonl" --peer alice --no-rssi --touches 2 --wait 45 \
    2>"$dir/check.txt" || verdict=$?
  stop "$run" "$dir/run.err"
  kill "$world"
  wait "$world" 2>/dev/null || true
  [ "$verdict" -eq 0 ] && "$python" "$ROOT/scripts/validate-events.py" "$dir/run.jsonl" 2>>"$dir/check.txt"
}
steady_touch uci-1.1 '.nodes[0].uci = "1.1"' &
steady_uci11=$!
steady_touch rssi-ignored '.nodes[0].rssi = false' &
steady_rssi_ignored=$!
# Both are waited for before either verdict, so that a failure leaves no world behind and says
# how each board did.
steady_status=(0 0)
wait "$steady_uci11" || steady_status[0]=$?
wait "$steady_rssi_ignored" || steady_status[1]=$?
steady_failed=()
for index in 0 1; do
  name=$([ "$index" -eq 0 ] && echo uci-1.1 || echo rssi-ignored)
  if [ "${steady_status[index]}" -eq 0 ]; then
    pass "a board without RSSI ($name) over USB: $(grep -h "every touch bumped" "$work/steady-$name/check.txt" | sed 's/^ok *//')"
  else
    steady_failed+=("$work/steady-$name/check.txt" "$work/steady-$name/run.err")
  fi
done
((${#steady_failed[@]} == 0)) || fail "boards without RSSI over USB: not every steady 3 cm touch bumped" "${steady_failed[@]}"
