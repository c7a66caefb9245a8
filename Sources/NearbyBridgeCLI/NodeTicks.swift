import Bridge

/// A node's clock on radios: a tick every 200 ms drives its timers (timeouts, repeats of
/// unanswered peer messages, the `nearest` report). The interval is the feature, so this loop
/// sleeps rather than waits for an event.
enum NodeTicks {
    static let interval: Duration = .milliseconds(200)

    /// Ticks `node` until the task is cancelled.
    static func run(_ node: BridgeNode) async {
        while true {
            do { try await Task.sleep(for: interval) } catch { return }
            node.tick()
        }
    }
}
