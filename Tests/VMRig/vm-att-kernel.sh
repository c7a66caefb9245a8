# In the VM (busybox sh): att-kernel.sh's script. With the argument `bluetoothd`, the system bus
# and bluetoothd start first, as systemd starts them. Then hci1 powered, hci0 powered and
# advertising connectable, and the kernel test suite, its result the run's status.
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
  echo "VM: bluetoothd running on both adapters"
fi
/opt/rig/mgmt_probe --power-on
/opt/rig/mgmt_probe --advertise 0
NEARBY_BRIDGE_VM_ATT=1 /opt/rig/NearbyBridgePackageTests.xctest --testing-library swift-testing --filter ATTListenerKernelTests
