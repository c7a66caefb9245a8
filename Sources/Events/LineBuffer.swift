import Glibc

/// The bounded queue between the nodes and a slow output (stdout into a pipe), drained by its own
/// POSIX thread so a blocking `write` never holds up a node.
///
/// Limits: `softLimit` lines, past which `EventStream` sheds `range` events; four times that, past
/// which `push` waits for the writer (backpressure instead of loss, for the events that must not
/// be dropped). A failed write ends the writer; later pushes are refused.
final class LineBuffer: @unchecked Sendable {
    // All mutable state below is guarded by `mutex`; `changed` signals both directions.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var lines: [String] = []
    /// Lines handed to the output but not yet written (the writer's current batch).
    private var writing = 0
    private var failed = false

    let softLimit: Int
    private let hardLimit: Int
    private let output: any EventOutput
    private let onFailure: @Sendable (any Error) -> Void

    init(softLimit: Int, output: any EventOutput, onFailure: @escaping @Sendable (any Error) -> Void) {
        precondition(softLimit > 0)
        self.softLimit = softLimit
        self.hardLimit = 4 * softLimit
        self.output = output
        self.onFailure = onFailure
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(changed, nil)
        startWriter()
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }

    var count: Int { locked { lines.count + writing } }
    var isPastSoftLimit: Bool { locked { lines.count + writing >= softLimit } }

    /// Queues lines, waiting while the queue is at its hard limit (a batch goes in whole, so the
    /// queue may pass that limit by one batch). False once the output failed.
    func push(_ batch: [String]) -> Bool {
        locked {
            while !failed, lines.count + writing >= hardLimit { pthread_cond_wait(changed, mutex) }
            guard !failed else { return false }
            lines += batch
            pthread_cond_broadcast(changed)
            return true
        }
    }

    /// Waits until everything queued so far is written (or the output failed).
    func drain() {
        locked {
            while !failed, lines.count + writing > 0 { pthread_cond_wait(changed, mutex) }
        }
    }

    private func startWriter() {
        let box = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { raw in
            Unmanaged<LineBuffer>.fromOpaque(raw!).takeRetainedValue().writeLoop()
            return nil
        }, box)
        precondition(status == 0, "pthread_create failed: \(status)")
        pthread_detach(thread)
    }

    /// Takes everything queued and writes it in one call, until the output fails. The writer
    /// keeps the buffer alive for the life of the process, like stdout itself.
    private func writeLoop() {
        while true {
            let batch: [String] = locked {
                while lines.isEmpty { pthread_cond_wait(changed, mutex) }
                defer { lines = [] }
                writing = lines.count
                return lines
            }
            do {
                try output.write(lines: batch)
                locked {
                    writing = 0
                    pthread_cond_broadcast(changed)
                }
            } catch {
                locked {
                    failed = true
                    writing = 0
                    lines = []
                    pthread_cond_broadcast(changed)
                }
                onFailure(error)
                return
            }
        }
    }
}
