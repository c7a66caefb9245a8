import Events

/// Where a node's events go: stamped with the node's tag and one time per batch.
struct NodeEmitter: Sendable {
    /// The node's tag, the `node` of every event it emits.
    let node: String
    let emitEvents: @Sendable ([Event]) -> Void

    func emit(_ body: Event.Body) { emitEvents([Event(node: node, body: body)]) }
    /// Events built with `node` already (the core's, which come as one batch per input).
    func emit(_ events: [Event]) { if !events.isEmpty { emitEvents(events) } }
}
