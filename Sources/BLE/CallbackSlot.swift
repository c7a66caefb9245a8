import Synchronization

/// A callback installed once and called from other threads (an adapter's event handler).
///
/// Not a `Mutex` of the closure itself: reading a closure out with `withLock { $0 }` writes it
/// back re-abstracted, one more thunk deep on every call, so each call gets slower than the one
/// before (an adapter reporting a few hundred adverts a second would crawl within minutes). The
/// closure sits in an immutable box instead, and only the box reference moves.
package final class CallbackSlot<Argument>: Sendable {
    private final class Box: Sendable {
        let call: @Sendable (Argument) -> Void
        init(_ call: @escaping @Sendable (Argument) -> Void) { self.call = call }
    }
    private let box = Mutex<Box?>(nil)

    package init() {}

    package func install(_ call: @escaping @Sendable (Argument) -> Void) {
        let new = Box(call)
        box.withLock { $0 = new }
    }

    /// Calls the callback, if one is installed, outside the lock.
    package func callAsFunction(_ argument: Argument) {
        box.withLock { $0 }?.call(argument)
    }
}
