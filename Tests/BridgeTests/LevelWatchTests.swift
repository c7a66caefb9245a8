import Events
import Logging
import Testing
import UCI
@testable import Bridge
@testable import Simulation

@Suite struct LevelWatchTests {
    @Test func aHundredRoundsInARowWithoutALevelWarnOnce() {
        var watch = LevelWatch()
        let firstRun = (0..<99).map { _ in watch.add(hasLevel: false) }
        #expect(!firstRun.contains(true))
        let withLevel = watch.add(hasLevel: true)
        #expect(!withLevel)
        let secondRun = (0..<150).map { _ in watch.add(hasLevel: false) }
        #expect(secondRun.filter { $0 }.count == 1)
        #expect(secondRun.firstIndex(of: true) == 99)
    }
}
