/// RANGING_ROUND_USAGE values for two-way ranging.
package enum RangingRoundUsage: UInt8, Sendable {
    case ssTwrDeferred = 1, dsTwrDeferred = 2, ssTwrNonDeferred = 3, dsTwrNonDeferred = 4
}
