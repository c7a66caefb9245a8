/// mgmt status codes (doc/mgmt-protocol.rst, "Status codes"). Kept open: newer kernels add codes.
package struct MgmtStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package var rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    package static let success = MgmtStatus(rawValue: 0x00)
    package static let unknownCommand = MgmtStatus(rawValue: 0x01)
    package static let failed = MgmtStatus(rawValue: 0x03)
    package static let noResources = MgmtStatus(rawValue: 0x07)
    package static let busy = MgmtStatus(rawValue: 0x0A)
    package static let rejected = MgmtStatus(rawValue: 0x0B)
    package static let notSupported = MgmtStatus(rawValue: 0x0C)
    package static let invalidParameters = MgmtStatus(rawValue: 0x0D)
    package static let notPowered = MgmtStatus(rawValue: 0x0F)
    package static let invalidIndex = MgmtStatus(rawValue: 0x11)
    package static let rfkilled = MgmtStatus(rawValue: 0x12)
    package static let permissionDenied = MgmtStatus(rawValue: 0x14)

    package var description: String {
        switch self {
        case .success: "Success"
        case .unknownCommand: "Unknown Command"
        case .failed: "Failed"
        case .noResources: "No Resources"
        case .busy: "Busy"
        case .rejected: "Rejected"
        case .notSupported: "Not Supported"
        case .invalidParameters: "Invalid Parameters"
        case .notPowered: "Not Powered"
        case .invalidIndex: "Invalid Index"
        case .rfkilled: "RFKilled"
        case .permissionDenied: "Permission Denied"
        default: "status 0x" + String(rawValue, radix: 16)
        }
    }
}
