import Bridge
import Testing
@testable import Proximity

@Suite struct ConfigTests {
    @Test func thresholdsThatMakeNoSenseAreExplained() {
        #expect(ProximityConfig.default.problems.isEmpty)
        #expect(ProximityConfig(nearMetres: 2, farMetres: 1).problems == ["the far threshold must be larger than the near threshold (e.g. near 1.0, far 1.5)"])
        #expect(ProximityConfig(bumpMetres: 0.25).problems == ["the bump threshold must be between 0 and 0.2 m (e.g. 0.08)"])
        #expect(ProximityConfig(nearMetres: 0).problems.count == 1)
    }
}
