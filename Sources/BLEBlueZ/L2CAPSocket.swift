import BLE
import BlueZMgmt
import CBlueZ
import Glibc
import SystemPackage

/// Kernel L2CAP LE sockets (SOCK_SEQPACKET): credit-based channels, where one read or write is one
/// SDU, so the peer protocol's frames need no extra framing here, and the ATT fixed channel, where
/// one is one ATT PDU. Security level LOW: the card exchange needs no pairing, like iOS's
/// `publishL2CAPChannel(withEncryption: false)`, and a GATT client may connect before it pairs.
enum L2CAPSocket {
    /// A socket bound to the adapter's LE address and, for a listener, to `psm`.
    static func make(adapter: [UInt8], psm: UInt8) throws(BlueZError) -> Int32 {
        let fd = try bound(adapter: adapter, psm: UInt16(psm), cid: 0, call: "bind(L2CAP psm \(psm))")
        var mtu = LEChannelParameters.receiveMTU
        try check("setsockopt(BT_RCVMTU)", setsockopt(fd, SOL_BLUETOOTH, BT_RCVMTU, &mtu, socklen_t(2)), fd: fd)
        return fd
    }

    /// The LE Attribute Protocol's fixed channel (Core Specification Vol 3 Part A §2.1).
    static let attCID: UInt16 = 4

    /// A socket bound to the adapter's LE ATT channel (CID 4, no PSM), as bluetoothd's own GATT
    /// server binds it (src/gatt-database.c). Its MTU is ATT's business (Exchange MTU), so the
    /// kernel's default for fixed channels, above ATT's largest PDU, stays.
    static func makeATT(adapter: [UInt8]) throws(BlueZError) -> Int32 {
        try bound(adapter: adapter, psm: 0, cid: attCID, call: "bind(L2CAP cid \(attCID))")
    }

    private static func bound(adapter: [UInt8], psm: UInt16, cid: UInt16, call: String) throws(BlueZError) -> Int32 {
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_L2CAP)
        guard fd >= 0 else { throw .socket(call: "socket(BTPROTO_L2CAP)", errno: errno) }
        var address = sockaddr_l2()
        address.l2_family = sa_family_t(AF_BLUETOOTH)
        address.l2_psm = psm.littleEndian
        address.l2_cid = cid.littleEndian
        address.l2_bdaddr = bdaddr(adapter)
        address.l2_bdaddr_type = UInt8(BDADDR_LE_PUBLIC)
        try check(call, withSockaddr(&address) { bind(fd, $0, $1) }, fd: fd)
        var security = bt_security(level: UInt8(BT_SECURITY_LOW), key_size: 0)
        try check(
            "setsockopt(BT_SECURITY)",
            setsockopt(fd, SOL_BLUETOOTH, BT_SECURITY, &security, socklen_t(MemoryLayout<bt_security>.size)), fd: fd)
        return fd
    }

    /// connect(2) to `peer` on `psm` (the kernel creates the LE link itself): 0, or -1 with errno
    /// (EINPROGRESS on a non-blocking socket, see `LinkSocket.connect`).
    static func connect(_ fd: Int32, to peer: BLEAddress, type: MgmtAddressType, psm: UInt8) -> Int32 {
        var address = sockaddr_l2()
        address.l2_family = sa_family_t(AF_BLUETOOTH)
        address.l2_psm = UInt16(psm).littleEndian
        address.l2_bdaddr = bdaddr(peer.bytes)
        address.l2_bdaddr_type = type.rawValue
        return withSockaddr(&address) { Glibc.connect(fd, $0, $1) }
    }

    /// Accepts one connection: the socket and the peer's address, or why not.
    static func accept(_ listener: Int32) -> Result<(Int32, BLEAddress), Errno> {
        var address = sockaddr_l2()
        var length = socklen_t(MemoryLayout<sockaddr_l2>.size)
        let fd = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(listener, $0, &length) }
        }
        guard fd >= 0 else { return .failure(Errno(rawValue: errno)) }
        let b = address.l2_bdaddr.b
        return .success((fd, BLEAddress(bytes: [b.0, b.1, b.2, b.3, b.4, b.5])))
    }

    static func bdaddr(_ bytes: [UInt8]) -> bdaddr_t {
        bdaddr_t(b: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5]))
    }

    private static func withSockaddr(_ address: inout sockaddr_l2, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_l2>.size)) }
        }
    }

    private static func check(_ call: String, _ status: Int32, fd: Int32) throws(BlueZError) {
        guard status == 0 else {
            let code = errno
            close(fd)
            throw .socket(call: call, errno: code)
        }
    }
}
