# In the VM (busybox sh): att-kernel.sh's script. hci1 powered, hci0 powered and advertising
# connectable; then the kernel test suite, its result the run's status.
set -e
/opt/rig/mgmt_probe --power-on
/opt/rig/mgmt_probe --advertise 0
NEARBY_BRIDGE_VM_ATT=1 /opt/rig/NearbyBridgePackageTests.xctest --testing-library swift-testing --filter ATTListenerKernelTests
