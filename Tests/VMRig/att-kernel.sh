#!/usr/bin/env bash
# The kernel-socket GATT backend (ATTListener) on the VM rig's real kernel: hci0 advertises
# connectable, the test bundle's ATTListenerKernelTests serve the GATT database on hci0's LE ATT
# channel and query it from hci1 over the Bumble air. Without bluetoothd by default; with
# `--bluetoothd` Debian's bluetoothd runs first on both adapters, to see who answers the client
# then (the listener bound last, by the kernel's source: ours). Needs the debug test bundle
# (`swift build --build-tests`); ~20 s.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUNDLE=$ROOT/.build/debug/NearbyBridgePackageTests.xctest
[ -x "$BUNDLE" ] || { echo "att-kernel: build the tests first (swift build --build-tests)" >&2; exit 2; }
RIG=(--adapters 2 --mem 2048 --timeout 300 --file "$BUNDLE")
MODE=
[ "${1:-}" = --bluetoothd ] && { RIG+=(--bluetoothd); MODE=bluetoothd; }
exec "$ROOT/Tests/VMRig/run-vm.sh" "${RIG[@]}" -- "$ROOT/Tests/VMRig/vm-att-kernel.sh" $MODE
