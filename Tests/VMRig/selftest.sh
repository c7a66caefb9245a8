#!/bin/bash
# Self-test of the VM rig, without the project's Swift code: boots the Debian kernel with two
# Bumble-backed adapters and runs mgmt_probe (mgmt + L2CAP LE CoC, step by step) in the VM,
# once with BT 5-like controllers (extended LE commands) and once with BT 4.x-like ones (legacy
# LE commands, advertising added before power-on), then checks adapter faults (hardware error,
# unplug and replug).
#
#   Tests/VMRig/selftest.sh [--only ext|legacy|faults]... [--keep]
#
# Prints the probe's PASS/FAIL/INFO lines, one "ok"/"FAIL" line per scenario, and a closing
# "N passed, N failed" line; exits non-zero if any scenario failed. The full VM console of a
# failed scenario is printed; --keep keeps all consoles and HCI logs.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ONLY=()
KEEP=0
while [ $# -gt 0 ]; do
    case "$1" in
        --only) ONLY+=("$2"); shift 2 ;;
        --keep) KEEP=1; shift ;;
        *) echo "usage: $0 [--only ext|legacy|faults]... [--keep]" >&2; exit 2 ;;
    esac
done
WORK=$(mktemp -d /tmp/vmrig-selftest.XXXXXX)
PASSED=0
FAILED=0
cleanup() { if [ "$FAILED" -eq 0 ] && [ "$KEEP" -eq 0 ]; then rm -rf "$WORK"; else echo "logs kept in $WORK"; fi; }
trap cleanup EXIT
wanted() { [ ${#ONLY[@]} -eq 0 ] && return 0; local o; for o in "${ONLY[@]}"; do [ "$o" = "$1" ] && return 0; done; return 1; }

T0=$(date +%s)
"$HERE/build-rig.sh" --quiet || { echo "FAIL  build-rig.sh"; echo "0 passed, 1 failed"; exit 1; }
echo "rig ready in $(( $(date +%s) - T0 )) s"

scenario() {  # scenario NAME DESCRIPTION RUN-VM-ARGS... -- SCRIPT [ARGS]
    local name=$1 what=$2; shift 2
    local t=$(date +%s) status
    "$HERE/run-vm.sh" --timeout 180 --hci-log "$WORK/$name.hci.log" "$@" >"$WORK/$name.console" 2>"$WORK/$name.stderr"
    status=$?
    grep -E '^(PASS|FAIL|INFO|CHECK) ' "$WORK/$name.console" | sed "s/^/  [$name] /"
    local secs=$(( $(date +%s) - t ))
    if [ "$status" -eq 0 ] && ! grep -q '^FAIL ' "$WORK/$name.console"; then
        PASSED=$((PASSED + 1)); echo "ok    $name: $what (${secs} s)"
    else
        FAILED=$((FAILED + 1)); echo "FAIL  $name: $what (exit status $status, ${secs} s)"
        sed 's/^/  | /' "$WORK/$name.console"; sed 's/^/  ! /' "$WORK/$name.stderr"
    fi
}

cat >"$WORK/probe.sh" <<'EOF'
/opt/rig/mgmt_probe "$@"
EOF

# faults: checks run in the VM; each prints CHECK lines, FAIL on failure
cat >"$WORK/faults.sh" <<'EOF'
R=/opt/rig
fails=0
check() { if [ "$1" = 0 ]; then echo "PASS  $2"; else echo "FAIL  $2"; fails=$((fails + 1)); fi; }
$R/mgmt_probe --power-on >/dev/null
$R/mgmt_probe --monitor 0 >/tmp/mon.txt 2>&1 &
MON=$!
sleep 0.3
# 1. hardware error on hci0: the kernel resets it and powers it on again
echo "VMRIG-CTL hwerror 0"
n=0; until grep -q 'hci0 New Settings 0x00000201' /tmp/mon.txt; do n=$((n + 1)); [ $n -gt 100 ] && break; sleep 0.1; done
grep -q 'hci0 New Settings 0x00000200' /tmp/mon.txt; a=$?
grep -q 'hci0 New Settings 0x00000201' /tmp/mon.txt; b=$?
check $((a + b)) "hwerror: hci0 powered off and on again by the kernel (New Settings le, then powered,le)"
# 2. unplug hci1 (its UART is ttyS2): Index Removed, the hci1 directory goes away
pid=$(ps | grep 'hci_uart_attach /dev/ttyS2' | grep -v grep | awk '{print $1}')
kill $pid
n=0; until grep -q 'Index Removed hci1' /tmp/mon.txt; do n=$((n + 1)); [ $n -gt 50 ] && break; sleep 0.1; done
grep -q 'Index Removed hci1' /tmp/mon.txt; a=$?
[ ! -e /sys/class/bluetooth/hci1 ]; b=$?
check $((a + b)) "unplug: killing hci1's hci_uart_attach removes the adapter (Index Removed)"
# 3. replug: the same index comes back, and powers on
$R/hci_uart_attach /dev/ttyS2 >/dev/null
n=0; until grep -q 'Index Added hci1' /tmp/mon.txt; do n=$((n + 1)); [ $n -gt 100 ] && break; sleep 0.1; done
grep -q 'Index Added hci1' /tmp/mon.txt; a=$?
$R/mgmt_probe --power-on >/tmp/power.txt; b=$?
check $((a + b)) "replug: hci_uart_attach again brings hci1 back (Index Added) and it powers on"
# 4. the rig still works end to end after all that
$R/mgmt_probe --observe 1 --skip-ext-params >/tmp/probe.txt; a=$?
grep -E '^(FAIL|PASS  l2cap-client)' /tmp/probe.txt
check $a "after the faults: discovery and L2CAP between hci0 and hci1 still work"
kill $MON
sed 's/^/INFO  monitor: /' /tmp/mon.txt
exit $fails
EOF

wanted ext && scenario ext "BT 5 controllers (extended advertising, scanning, connection)" \
    -- "$WORK/probe.sh" --observe 2
wanted legacy && scenario legacy "BT 4.x controllers (legacy LE commands), Add Advertising before power-on" \
    --no-ext-adv -- "$WORK/probe.sh" --observe 2 --adv-before-power
wanted faults && scenario faults "hardware error, unplug, replug" -- "$WORK/faults.sh"

echo "selftest took $(( $(date +%s) - T0 )) s"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
