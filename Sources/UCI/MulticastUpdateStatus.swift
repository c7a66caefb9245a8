import ByteCoding

/// Multicast list update statuses: a table of their own, not `StatusCode` (uci.md §1.8).
package enum MulticastUpdateStatus {
    package static let ok: UInt8 = 0x00
    package static let listFull: UInt8 = 0x01
    package static let keyFetchFailed: UInt8 = 0x02
    package static let subSessionIDNotFound: UInt8 = 0x03
    package static let addressNotFound: UInt8 = 0x07
    package static let addressAlreadyPresent: UInt8 = 0x08
}
