# In the VM (busybox sh): att-kernel.sh's and dbus-gatt.sh's script. With the argument
# `bluetoothd`, the system bus and bluetoothd start first, as systemd starts them. Then hci1
# powered, hci0 powered and advertising connectable, and the test suite, its result the run's
# status: the kernel-socket backend's (ATTListenerKernelTests), or with a second argument `dbus`
# the D-Bus backend's (GATTDBusBluetoothdTests, which needs bluetoothd).
set -e
if [ "${1:-}" = bluetoothd ]; then
  mkdir -p /run/dbus
  dbus-daemon --system --fork
  /usr/libexec/bluetooth/bluetoothd -n >btd.log 2>&1 &
  tries=0
  until [ "$(bluetoothctl list 2>/dev/null | grep -c Controller)" -ge 2 ]; do
    tries=$((tries + 1))
    [ $tries -lt 40 ] || { echo "VM: bluetoothd does not list both adapters"; cat btd.log; exit 1; }
    sleep 0.5
  done
  echo "VM: bluetoothd $(/usr/libexec/bluetooth/bluetoothd --version) running on both adapters"
fi
# bluetoothd powers the adapters on itself as it starts: Set Powered can meet Busy until it is done.
tries=0
until /opt/rig/mgmt_probe --power-on; do
  tries=$((tries + 1))
  [ $tries -lt 10 ] || { echo "VM: the adapters did not power on"; exit 1; }
  sleep 0.5
done
/opt/rig/mgmt_probe --advertise 0
if [ "${2:-}" = dbus ]; then
  status=0
  NEARBY_BRIDGE_VM_DBUS=1 /opt/rig/NearbyBridgePackageTests.xctest --testing-library swift-testing --filter GATTDBusBluetoothdTests || status=$?
  echo "--- bluetoothd"; cat btd.log
  exit $status
fi
NEARBY_BRIDGE_VM_ATT=1 /opt/rig/NearbyBridgePackageTests.xctest --testing-library swift-testing --filter ATTListenerKernelTests
