@testable import AndroidRangingOOB

/// What both Android responders are to `ResponderHarness`: the node's inputs in, its actions out.
protocol AndroidResponderMachine {
    mutating func receive(_ input: AndroidOOBResponderInput, now: Int64) -> [AndroidOOBResponderAction]
}

extension AndroidOOBResponder: AndroidResponderMachine {}
extension JetpackResponder: AndroidResponderMachine {}
