#ifndef NEARBY_BRIDGE_CLIBUSB_SHIM_H
#define NEARBY_BRIDGE_CLIBUSB_SHIM_H
#include <libusb.h>
#endif
