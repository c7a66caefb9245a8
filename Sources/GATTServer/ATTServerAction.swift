/// What `ATTServer` asks of its backend after a PDU: send octets to the client, or hand the
/// bridge what the client did. Pure values, so the kernel-socket backend and the tests run
/// the same server.
package enum ATTServerAction: Hashable, Sendable {
    /// One PDU for the client (a response, an error response).
    case send([UInt8])
    /// The client wrote a characteristic's value (a Write Request, already answered, or a
    /// Write Command, which gets no answer).
    case write(characteristic: GATTUUID, valueHandle: UInt16, value: [UInt8], withResponse: Bool)
    /// The client changed its subscription to a characteristic (its 0x2902 descriptor).
    case subscription(characteristic: GATTUUID, GATTClientConfiguration)
    /// The client confirmed the outstanding indication.
    case indicationConfirmed(characteristic: GATTUUID)
}
