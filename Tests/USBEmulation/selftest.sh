#!/bin/bash
# Self-test of the emulated DWM3001CDK: builds probe.c against libusb-1.0, starts a UWBS on TCP
# and runs the probe's modes under emulated_board.py. Needs no Swift code of the project; uses
# the `nearby-bridge world` server when it has been built, else fake_uwbs.py.
#
#   Tests/USBEmulation/selftest.sh [--uwbs auto|world|python] [--keep]
#
# Prints one line per scenario and exits non-zero if any failed. --keep keeps the work
# directory (probe output and emulator logs) even when everything passed.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=/usr/bin/python3
EMU="$HERE/emulated_board.py"
UWBS_KIND=auto
KEEP=0
while [ $# -gt 0 ]; do
    case "$1" in
        --uwbs) UWBS_KIND=$2; shift 2 ;;
        --keep) KEEP=1; shift ;;
        *) echo "usage: $0 [--uwbs auto|world|python] [--keep]" >&2; exit 2 ;;
    esac
done

WORK=$(mktemp -d /tmp/usbemu-selftest.XXXXXX)
UWBS_PID=
PASSED=0
FAILED=0
cleanup() {
    [ -n "$UWBS_PID" ] && kill "$UWBS_PID" 2>/dev/null && wait "$UWBS_PID" 2>/dev/null
    if [ "$FAILED" -eq 0 ] && [ "$KEEP" -eq 0 ]; then rm -rf "$WORK"; else echo "logs kept in $WORK"; fi
}
trap cleanup EXIT

ok()   { PASSED=$((PASSED + 1)); printf 'ok    %s\n' "$1"; }
fail() { FAILED=$((FAILED + 1)); printf 'FAIL  %s\n' "$1"; [ -n "${2:-}" ] && sed 's/^/      | /' "$2" | grep -E 'FAIL|error|Error|Traceback' | head -20; }

# ------------------------------------------------------------------ prerequisites
for f in /usr/bin/umockdev-wrapper /usr/share/gir-1.0/UMockdev-1.0.gir; do
    [ -e "$f" ] || { echo "missing $f (apt-get install umockdev libumockdev-dev gir1.2-umockdev-1.0 python3-gi)"; exit 2; }
done
if ! gcc -O2 -Wall -Wextra -o "$WORK/probe" "$HERE/probe.c" $(pkg-config --cflags --libs libusb-1.0) 2>"$WORK/build.log"; then
    cat "$WORK/build.log"; echo "cannot build probe.c (apt-get install libusb-1.0-0-dev pkg-config)"; exit 2
fi
PROBE="$WORK/probe"

# ------------------------------------------------------------------ UWBS
WORLD="$ROOT/.build/debug/nearby-bridge"
if [ "$UWBS_KIND" = auto ]; then
    if [ -x "$WORLD" ]; then UWBS_KIND=world; else UWBS_KIND=python; fi
fi
UCI=
if [ "$UWBS_KIND" = world ]; then
    "$WORLD" world --uwb-port 0 --air-port 0 --log-level info >"$WORK/world.out" 2>"$WORK/world.err" &
    UWBS_PID=$!
    for _ in $(seq 100); do
        UCI=$(grep -o -- '--uwb tcp:[0-9.]*:[0-9]*' "$WORK/world.err" 2>/dev/null | head -1 | sed 's/--uwb tcp://')
        [ -n "$UCI" ] && break
        sleep 0.1
    done
    VENDOR_HEX="4e 42 56 57"       # "NBVW"
else
    $PY "$HERE/fake_uwbs.py" >"$WORK/uwbs.out" 2>"$WORK/uwbs.err" &
    UWBS_PID=$!
    for _ in $(seq 50); do
        PORT=$(awk '/^PORT/{print $2}' "$WORK/uwbs.out" 2>/dev/null)
        [ -n "$PORT" ] && { UCI=127.0.0.1:$PORT; break; }
        sleep 0.1
    done
    VENDOR_HEX="45 4d 55 42"       # "EMUB"
fi
[ -n "$UCI" ] || { echo "the UWBS ($UWBS_KIND) did not start"; cat "$WORK"/*.err 2>/dev/null; exit 2; }
echo "UWBS: $UWBS_KIND at $UCI"

# ------------------------------------------------------------------ scenarios
# run NAME [emulator options] -- COMMAND...   (expects exit status 0 unless EXPECT_RC is set)
run() {
    local name=$1; shift
    local expect=${EXPECT_RC:-0}
    timeout 90 $PY "$EMU" --log "$WORK/$name.emu.log" "$@" >"$WORK/$name.out" 2>&1
    local rc=$?
    if [ "$rc" -eq "$expect" ]; then
        return 0
    fi
    echo "      exit status $rc, expected $expect" >>"$WORK/$name.out"
    return 1
}
has() { grep -q -- "$2" "$WORK/$1.out"; }

CTL="$WORK/control.sock"

if run info --uci "$UCI" -- "$PROBE" info && has info "response=40 02 00 .* $VENDOR_HEX"; then
    ok "enumerate, strings, detach cdc_acm, claim, DTR, CORE_GET_DEVICE_INFO round trip"
else fail "info" "$WORK/info.out"; fi

if run nodtr --uci "$UCI" --control "$CTL" -- "$PROBE" nodtr; then
    ok "before DTR: bulk IN held, bulk OUT NAKed; after DTR: held bytes delivered"
else fail "nodtr" "$WORK/nodtr.out"; fi

if run garbage --uci "$UCI" --control "$CTL" -- "$PROBE" garbage; then
    ok "garbage N: random bytes arrive as their own bulk IN transfer between UCI packets"
else fail "garbage" "$WORK/garbage.out"; fi

if run deny --uci "$UCI" --control "$CTL" -- "$PROBE" deny; then
    ok "deny/allow: libusb_open fails with LIBUSB_ERROR_ACCESS, then works again"
else fail "deny" "$WORK/deny.out"; fi

if run unplug --uci "$UCI" --control "$CTL" -- "$PROBE" unplug; then
    ok "unplug mid-transfer: NO_DEVICE, hotplug LEFT, not listed; replug: ARRIVED, new address, works"
else fail "unplug" "$WORK/unplug.out"; fi

if ! command -v setsid >/dev/null; then
    echo "skip  unplug-setsid (no setsid)"
elif run unplug-setsid --uci "$UCI" --control "$CTL" -- setsid -w "$PROBE" unplug; then
    ok "unplug does not SIGHUP a client that is a session leader"
else fail "unplug-setsid" "$WORK/unplug-setsid.out"; fi

if run arrive --uci "$UCI" --control "$CTL" --start-unplugged -- "$PROBE" arrive; then
    ok "--start-unplugged + plug: hotplug ARRIVED, then works"
else fail "arrive" "$WORK/arrive.out"; fi

if run reopen --uci "$UCI" --control "$CTL" -- "$PROBE" reopen; then
    ok "second handle: claim EBUSY while the first holds it, free at once after close"
else fail "reopen" "$WORK/reopen.out"; fi

if run misc --uci "$UCI" -- "$PROBE" misc; then
    ok "auto-detach (DISCONNECT_CLAIM), alt settings, clear_halt, set_configuration EBUSY, stall, reset"
else fail "misc" "$WORK/misc.out"; fi

if run usbfs --uci "$UCI" -- "$PROBE" usbfs; then
    ok "raw usbfs: read() descriptors, USBDEVFS_CONTROL/_BULK (with timeout), blocking REAPURB, DISCARDURB"
else fail "usbfs" "$WORK/usbfs.out"; fi

if run silent --uci none -- "$PROBE" silent; then
    ok "--uci none: board present, accepts OUT, never answers"
else fail "silent" "$WORK/silent.out"; fi

if run idle --uci "$UCI" -- "$PROBE" idle; then
    emu_cpu=$(sed -n 's/.*emulator CPU \([0-9.]*\)s user \([0-9.]*\)s system.*/\1 \2/p' "$WORK/idle.emu.log" | tail -1)
    probe_cpu=$(sed -n 's/.*idle_cpu_ms=\([0-9.]*\).*/\1/p' "$WORK/idle.out")
    if awk -v c="$emu_cpu" 'BEGIN { split(c, a, " "); exit !(a[1] + a[2] < 1.5) }'; then
        ok "idle with a pending transfer: probe ${probe_cpu} ms CPU in 2 s, emulator ${emu_cpu/ /s+}s in total; cancel reaps CANCELLED"
    else fail "idle: emulator used too much CPU ($emu_cpu)" "$WORK/idle.out"; fi
else fail "idle" "$WORK/idle.out"; fi

if run bench --uci "$UCI" -- "$PROBE" bench; then
    ok "$(grep -o 'exchanges=.*per_exchange_ms=[0-9.]*' "$WORK/bench.out")"
else fail "bench" "$WORK/bench.out"; fi

if EXPECT_RC=3 run exitcode -- sh -c 'exit 3'; then
    ok "exit status of COMMAND is passed through"
else fail "exit status" "$WORK/exitcode.out"; fi

if command -v lsusb >/dev/null; then
    if run lsusb -- sh -c 'lsusb -d 1915: && lsusb -t' && has lsusb 'ID 1915:520f .*nRF52 USB Product' \
        && has lsusb 'If 1, Class=CDC Data, Driver=cdc_acm'; then
        ok "lsusb sees 1915:520f nRF52 USB Product with cdc_acm bound"
    else fail "lsusb" "$WORK/lsusb.out"; fi
fi

echo "selftest: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
