import Testing
import UCI

@Suite("Multicast list notification: published bytes")
struct MulticastListNotificationTests {
    @Test func uci1LayoutFromPicaPdl() throws {
        // pica pdl `test SessionUpdateControllerMulticastListNtf` (the 1.x layout): session token
        // 0x03020100, remaining_multicast_list_size 4, no controlee statuses.
        try checkNotification(
            .multicastListUpdate(MulticastListUpdate(session: 0x0302_0100, remainingListSize: 4, controlees: [])),
            "61 07 00 06 00 01 02 03 04 00")
    }

    /// AOSP uwb_core `params/uci_packets.rs` tests
    /// `test_session_notification_casting_from_session_update_controller_multicast_list_ntf_v1_packet`
    /// and `..._v2_packet`: session token 0x32; controlees with MAC octets 0c a8 (status 0, OK;
    /// 1.x sub-session 0x30) and 0c a9 (status 2, key fetch failed; 1.x sub-session 0x31). The
    /// bytes follow the payload writers in that test module: V2 = n, [mac, status]; V1 =
    /// remaining, n, [mac, subsession u32 LE, status].
    @Test func bothLayoutsFromAospTests() throws {
        try checkNotification(
            .multicastListUpdate(
                MulticastListUpdate(
                    session: 0x32, remainingListSize: nil,
                    controlees: [
                        ControleeStatus(shortAddress: 0xA80C, status: MulticastUpdateStatus.ok),
                        ControleeStatus(shortAddress: 0xA90C, status: MulticastUpdateStatus.keyFetchFailed),
                    ])),
            "61 07 00 0b 32 00 00 00 02 0c a8 00 0c a9 02")
        try checkNotification(
            .multicastListUpdate(
                MulticastListUpdate(
                    session: 0x32, remainingListSize: 2,
                    controlees: [
                        ControleeStatus(shortAddress: 0xA80C, subSessionID: 0x30, status: MulticastUpdateStatus.ok),
                        ControleeStatus(shortAddress: 0xA90C, subSessionID: 0x31, status: MulticastUpdateStatus.keyFetchFailed),
                    ])),
            "61 07 00 14 32 00 00 00 02 02 0c a8 30 00 00 00 00 0c a9 31 00 00 00 02")
    }

    @Test func payloadThatFitsNeitherLayoutIsRejected() throws {
        // Claims two 2.0 entries (6 octets) but carries one.
        #expect(throws: UCIError.self) {
            try UCINotification(decodeWire(bytes("61 07 00 08 32 00 00 00 02 0c a8 00")))
        }
    }
}
