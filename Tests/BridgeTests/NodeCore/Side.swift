/// The two sides of a pair: C, the controller (the lower peer id: it connects and decides each
/// profile drop), and R, the controlee.
enum Side: Int, CaseIterable, Sendable, CustomStringConvertible {
    case c, r
    var other: Side { self == .c ? .r : .c }
    var description: String { self == .c ? "C" : "R" }
}
