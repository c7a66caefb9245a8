#!/usr/bin/env bash
# Issue 34, item 2: the kernel BUG a closed connecting L2CAP socket can hit on Debian 12's 6.1.192
# kernel, reproduced, and a way around it (make rig-kernel-race; not in CI: ~7 min, and the
# reproduction is a race).
#
# Three VM runs of l2cap_close_race (hci0 advertises, hci1 connects to it and gives up after
# 50-700 ms, then tries again ~0.3-0.5 s later, ATTEMPTS times):
#   close  closes the socket while the kernel still creates the LE connection, as the bridge does
#          (expected: the kernel logs `list_del corruption` / `kernel BUG at lib/list_debug.c:56`
#          in hci_chan_del from l2cap_sock_release, within a few dozen attempts);
#   wait   waits until the kernel has ended the connect, then closes (required: no complaint in
#          the kernel log; README.md says why the bridge does not do this);
#   wait, 4.5 s apart (ATTEMPTS/4): every attempt a new LE link, so every connect is still in
#          progress when given up and is waited out (required: no complaint).
# Exit status 0 when both "wait" runs are clean; the "close" run is reported, not required.
# The other path to the same BUG on Debian's 6.1.192, a close after the kernel itself failed the
# connect, is what ble-bump.sh meets when rig-b is killed (README.md, "Kernel bug seen").
#
#   Tests/VMRig/kernel-race.sh [ATTEMPTS]   (default 120; ~7 min)
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
attempts=${1:-120}
work=$(mktemp -d /tmp/nb-kernel-race.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$HERE/build-rig.sh" --quiet >&2 || exit 1
. "${RIG_CACHE:-$ROOT/.build-vm}/rig.env"
cat >"$work/vm.sh" <<'VM'
R=/opt/rig
$R/mgmt_probe --power-on >/dev/null 2>&1
$R/mgmt_probe --advertise 0 >/dev/null 2>&1 &
sleep 2
$R/l2cap_close_race "$@"
VM
vm_run() {  # NAME MODE ATTEMPTS GAP_MS
    echo "== $1: $3 attempts" >&2
    "$HERE/run-vm.sh" --adapters 2 --timeout $(($3 * 50 + 120)) \
      --file "$RIG_CACHE/bin/l2cap_close_race:/opt/rig/l2cap_close_race" \
      -- "$work/vm.sh" "$2" "$3" "$4" >"$work/$1.console" 2>"$work/$1.err"
    echo $? >"$work/$1.status"
    grep -a -E '^RACE |list_del corruption|kernel BUG|hci_chan_del|l2cap_sock_release' "$work/$1.console" | sed 's/^VMRIG-KERNEL| //' | sort -u | head -8 >&2
}
vm_run close close "$attempts" 300
vm_run wait wait "$attempts" 300
vm_run wait-apart wait $((attempts / 4)) 4500
if [ "$(cat "$work/close.status")" != 0 ]; then
    echo "close: the kernel complained (status $(cat "$work/close.status")): reproduced" >&2
else
    echo "close: no complaint in $attempts attempts this time (the BUG is a race; run again or with more attempts)" >&2
fi
failed=0
for run in wait wait-apart; do
    if [ "$(cat "$work/$run.status")" = 0 ]; then
        echo "ok    $run: given-up connects closed after the kernel ended them, no kernel complaint" >&2
    else
        echo "FAIL  $run: the kernel complained or the run failed (status $(cat "$work/$run.status"))" >&2
        sed 's/^/  | /' "$work/$run.console" | tail -40 >&2
        failed=1
    fi
done
exit $failed
