/// The L2CAP LE credit-based channel the BlueZ backend opens, with the values Debian 12's 6.1
/// kernel gives it; captures render the same values in their signalling (docs/PROTOCOL.md,
/// "L2CAP channel" and "Reading a capture").
package enum LEChannelParameters {
    /// The SDU size we accept: `BT_RCVMTU` on every L2CAP socket; a peer protocol frame is at
    /// most 544 bytes sealed.
    package static let receiveMTU: UInt16 = 1024
    /// LE_ACL_Data_Packet_Length the rendering assumes its controller reports (LE Read Buffer
    /// Size): 251, the LE data length maximum, as BT 5 controllers and the VM rig's report.
    package static let controllerACLLength: UInt16 = 251
    /// The kernel's MPS: the MTU, cut to one ACL packet (`l2cap_le_flowctl_init`:
    /// min(imtu, conn->mtu − 4)), so 247.
    package static let mps: UInt16 = min(receiveMTU, controllerACLLength - 4)
    /// The kernel's credits while it does not yet know its socket's free receive space
    /// (`l2cap_le_rx_credits` with rx_avail −1): enough for one whole SDU, imtu / MPS + 1 = 5.
    package static let initialCredits: UInt16 = receiveMTU / mps + 1
    /// L2CAP_CID_DYN_START: each kernel gives the first channel of a new LE link this CID.
    package static let firstDynamicCID: UInt16 = 0x0040
}
