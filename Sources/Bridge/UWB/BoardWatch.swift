/// Notices a board that has gone quiet. A board with sessions running reports every ranging
/// round (a failed one too), so several seconds without a word mean it has stopped working
/// while its connection stays open: then it is asked something cheap (`UWBSessions.probe`), and
/// one that does not answer is reopened. Pure: the node feeds it its own time.
struct BoardWatch {
    /// Silence before a probe; a probe at most this often.
    static let silenceMilliseconds: Int64 = 5_000

    private var lastHeard: Int64
    private var lastProbe: Int64?

    init(now: Int64) {
        lastHeard = now
    }

    /// The board said something (a notification, a range).
    mutating func heard(at now: Int64) {
        lastHeard = now
        lastProbe = nil
    }

    /// Whether to probe now: silent for `silenceMilliseconds` since it was last heard or probed.
    mutating func shouldProbe(at now: Int64) -> Bool {
        guard now - max(lastHeard, lastProbe ?? lastHeard) >= Self.silenceMilliseconds else { return false }
        lastProbe = now
        return true
    }
}
