#!/usr/bin/env bash
# The D-Bus GATT backend (GATTDBusApplication) against Debian's bluetoothd on the VM rig's real
# kernel: bluetoothd on both adapters, hci0 advertising connectable; the test bundle's
# GATTDBusBluetoothdTests register the GATT application on hci0 through GattManager1 and query
# it from hci1 over the Bumble air with the kernel's LE ATT socket, through bluetoothd's ATT
# server. Needs the debug test bundle (`swift build --build-tests`); ~30 s.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUNDLE=$ROOT/.build/debug/NearbyBridgePackageTests.xctest
[ -x "$BUNDLE" ] || { echo "dbus-gatt: build the tests first (swift build --build-tests)" >&2; exit 2; }
exec "$ROOT/Tests/VMRig/run-vm.sh" --adapters 2 --mem 2048 --timeout 300 --bluetoothd --file "$BUNDLE" \
  -- "$ROOT/Tests/VMRig/vm-att-kernel.sh" bluetoothd dbus
