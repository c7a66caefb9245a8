import UCI

/// The FiRa UCI generation a virtual board speaks (scenario node option `"uci"`). What a host
/// must tell apart: UCI 2.0 answers SESSION_INIT with a session handle, lists refused controlees
/// in the multicast-list response, numbers its capabilities from MAX_MESSAGE_SIZE (0x00) and
/// reports RSSI in each measurement; UCI 1.1 names sessions by their id (SESSION_INIT answers
/// status only), reports controlees only in the notification (with remaining list size and
/// sub-session ids), numbers capabilities from the PHY version range (0x00) and has no RSSI
/// octet (RFU) and no SESSION_KEY, so no provisioned STS.
package enum BoardUCI: String, Sendable, Codable, CaseIterable {
    case v1_1 = "1.1"
    case v2_0 = "2.0"
}
