# In the VM (busybox sh): dbus-gatt.sh's script. The system bus and bluetoothd start first, as
# systemd starts them; then hci1 powered, hci0 powered and advertising connectable, and the
# D-Bus backend's test suite, its result the run's status.
set -e
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
# bluetoothd powers the adapters on itself as it starts: Set Powered can meet Busy until it is done.
tries=0
until /opt/rig/mgmt_probe --power-on; do
  tries=$((tries + 1))
  [ $tries -lt 10 ] || { echo "VM: the adapters did not power on"; exit 1; }
  sleep 0.5
done
/opt/rig/mgmt_probe --advertise 0
status=0
NEARBY_BRIDGE_VM_DBUS=1 /opt/rig/NearbyBridgePackageTests.xctest --testing-library swift-testing --filter GATTDBusBluetoothdTests || status=$?
echo "--- bluetoothd"; cat btd.log
exit $status
