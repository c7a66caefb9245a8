/// DEVICE_ROLE values (UCI 2.0 adds advertiser/observer/DT roles, not used here).
package enum DeviceRole: UInt8, Sendable { case responder = 0, initiator = 1 }
