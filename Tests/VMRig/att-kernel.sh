#!/usr/bin/env bash
# The kernel-socket GATT backend (ATTListener) on the VM rig's real kernel, without bluetoothd:
# hci0 advertises connectable, the test bundle's ATTListenerKernelTests serve the GATT database
# on hci0's LE ATT channel and connect to it from hci1 over the Bumble air. Needs the debug test
# bundle (`swift build --build-tests`); ~1 min.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUNDLE=$ROOT/.build/debug/NearbyBridgePackageTests.xctest
[ -x "$BUNDLE" ] || { echo "att-kernel: build the tests first (swift build --build-tests)" >&2; exit 2; }
exec "$ROOT/Tests/VMRig/run-vm.sh" --adapters 2 --mem 2048 --timeout 300 --file "$BUNDLE" -- "$ROOT/Tests/VMRig/vm-att-kernel.sh"
