/// Which Jetpack session scope a side of a Jetpack session runs (`androidx.core.uwb`'s
/// `UwbControllerSessionScope` or `UwbControleeSessionScope`), one octet on the wire. For config
/// type 1 Jetpack's controller is also the FiRa initiator: AOSP's Jetpack backend
/// (packages/modules/Uwb, androidx_backend/src/androidx/core/uwb/backend/impl/internal/
/// `ConfigurationManager.java`, `CONFIG_UNICAST_DS_TWR`'s `isControllerTheInitiator()` is true)
/// gives a controller DEVICE_ROLE initiator and a controlee responder, so one octet carries both.
package enum JetpackRole: UInt8, CaseIterable, Sendable, CustomStringConvertible {
    case controlee = 0
    case controller = 1

    /// The role the other side takes: a unicast session has one controller and one controlee.
    package var peer: JetpackRole { self == .controller ? .controlee : .controller }

    /// Who runs the session, in the OOB configuration's terms.
    package var mode: UWBDeviceMode { self == .controller ? .controller : .controlee }

    /// The FiRa ranging role that goes with it for config type 1 (controller = initiator).
    package var rangingRole: UWBDeviceRole { self == .controller ? .initiator : .responder }

    package var description: String { self == .controller ? "controller" : "controlee" }
}
