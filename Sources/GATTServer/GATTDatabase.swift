import ByteCoding

/// The attribute table a GATT server exposes, laid out as a real server lays it out (Core
/// Specification Vol 3 Part G §3): handles from 0x0001 in order; per service its declaration
/// (0x2800, the service UUID), then per characteristic its declaration (0x2803: properties,
/// value handle, UUID), its value, and its client characteristic configuration descriptor
/// (0x2902) if it notifies or indicates. Immutable: both backends read the same table (the
/// ATT server for the kernel's LE ATT channel, a D-Bus backend for BlueZ's GattManager1), and
/// per-connection state (written values, subscriptions, MTU) lives in `ATTServer`.
package struct GATTDatabase: Hashable, Sendable {
    /// A characteristic with the handles the layout gave it.
    package struct Characteristic: Hashable, Sendable {
        package let definition: GATTCharacteristic
        package let service: GATTUUID
        package let declarationHandle: UInt16
        package let valueHandle: UInt16
        /// The 0x2902 descriptor's handle; nil if the characteristic neither notifies nor
        /// indicates.
        package let configurationHandle: UInt16?

        package var uuid: GATTUUID { definition.uuid }
    }

    /// A service with its handle range.
    package struct Service: Hashable, Sendable {
        package let definition: GATTService
        package let startHandle: UInt16
        package let endHandle: UInt16
    }

    /// Every attribute; `attributes[i].handle == i + 1`.
    package let attributes: [GATTAttribute]
    package let services: [Service]
    package let characteristics: [Characteristic]

    /// Lays out `services` in order. At most 0xFFFF attributes (ATT's handle space).
    package init(_ services: [GATTService]) {
        var attributes: [GATTAttribute] = []
        var laidOutServices: [Service] = []
        var characteristics: [Characteristic] = []
        var next: UInt16 = 1
        for service in services {
            let start = next
            let attributeCount = 1 + service.characteristics.reduce(0) { $0 + ($1.hasClientConfiguration ? 3 : 2) }
            precondition(Int(start) + attributeCount - 1 <= 0xFFFF, "a GATT database beyond ATT's 65535 handles")
            let end = start + UInt16(attributeCount - 1)
            attributes.append(
                GATTAttribute(handle: start, type: .primaryService, kind: .serviceDeclaration(endHandle: end), value: service.uuid.littleEndian))
            next += 1
            for definition in service.characteristics {
                let index = characteristics.count
                let declaration = next
                let valueHandle = next + 1
                var declarationValue = [definition.properties.rawValue]
                declarationValue.appendLE(valueHandle)
                declarationValue += definition.uuid.littleEndian
                attributes.append(
                    GATTAttribute(handle: declaration, type: .characteristic, kind: .characteristicDeclaration, value: declarationValue))
                attributes.append(
                    GATTAttribute(
                        handle: valueHandle, type: definition.uuid, kind: .characteristicValue(characteristic: index),
                        value: definition.value))
                next += 2
                var configuration: UInt16?
                if definition.hasClientConfiguration {
                    configuration = next
                    attributes.append(
                        GATTAttribute(
                            handle: next, type: .clientCharacteristicConfiguration, kind: .clientConfiguration(characteristic: index),
                            value: [0, 0]))
                    next += 1
                }
                characteristics.append(
                    Characteristic(
                        definition: definition, service: service.uuid, declarationHandle: declaration, valueHandle: valueHandle,
                        configurationHandle: configuration))
            }
            laidOutServices.append(Service(definition: service, startHandle: start, endHandle: end))
        }
        self.attributes = attributes
        self.services = laidOutServices
        self.characteristics = characteristics
    }

    /// The attribute at `handle`, if there is one.
    package func attribute(_ handle: UInt16) -> GATTAttribute? {
        guard handle >= 1, Int(handle) <= attributes.count else { return nil }
        return attributes[Int(handle) - 1]
    }

    /// The first characteristic with `uuid` (the bridge's services never repeat one).
    package func characteristic(_ uuid: GATTUUID) -> Characteristic? {
        characteristics.first { $0.uuid == uuid }
    }

    /// The attributes with handles in `start...end` (an empty range for `start > end`).
    package func attributes(from start: UInt16, through end: UInt16) -> ArraySlice<GATTAttribute> {
        let lower = max(Int(start), 1) - 1
        let upper = min(Int(end), attributes.count)
        guard lower < upper else { return [] }
        return attributes[lower..<upper]
    }
}
