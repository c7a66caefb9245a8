import Events
import Foundation
import Testing
@testable import Simulation

/// A path with `"loop": true` is walked again from its first waypoint, so a rig that joins a
/// world late still sees whole gestures (the end-to-end checks' repeated touches).
@Suite struct LoopingPathTests {
    @Test func aLoopingPathStartsOverAndAPlainOneHoldsItsLastPoint() throws {
        let json = """
            { "name": "loop", "duration": 60, "nodes": [
              { "name": "a", "loop": true, "path": [[2, 1, 0], [4, 0, 0], [6, 1, 0]] },
              { "name": "b", "path": [[2, 1, 0], [4, 0, 0], [6, 1, 0]] } ] }
            """
        let scenario = try Scenario.decode(Data(json.utf8))
        let (looping, plain) = (scenario.nodes[0], scenario.nodes[1])
        #expect(looping.position(at: 3).x == 0.5)
        #expect(looping.position(at: 8).x == 0)  // 2 s into the second round: at its 4 s point
        #expect(looping.position(at: 41).x == 0.5)
        #expect(plain.position(at: 8).x == 1)
        #expect(plain.position(at: 41).x == 1)
    }

    @Test func aLoopNeedsAPathThatSpansTime() {
        let json = #"{ "name": "loop", "duration": 60, "nodes": [ { "name": "a", "loop": true, "path": [[0, 1, 0]] } ] }"#
        #expect(throws: Scenario.Invalid.self) { try Scenario.decode(Data(json.utf8)) }
    }
}
