#ifndef NEARBY_BRIDGE_CMOSQUITTO_SHIM_H
#define NEARBY_BRIDGE_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#include <mqtt_protocol.h>
#endif
