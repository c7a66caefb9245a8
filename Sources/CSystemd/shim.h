#ifndef NEARBY_BRIDGE_CSYSTEMD_SHIM_H
#define NEARBY_BRIDGE_CSYSTEMD_SHIM_H
// sd-bus (libsystemd): the D-Bus library the GATT backend beside bluetoothd uses. Only its
// non-variadic calls are used from Swift.
#include <systemd/sd-bus.h>
#endif
