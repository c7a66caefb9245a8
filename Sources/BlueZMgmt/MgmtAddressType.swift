/// Address types as mgmt uses them (Device Found, Start Discovery bit positions).
package enum MgmtAddressType: UInt8, Sendable {
    case bredr = 0, lePublic = 1, leRandom = 2
}
