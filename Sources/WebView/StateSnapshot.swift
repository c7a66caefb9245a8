import FlyingFox
import FlyingSocks
import Foundation
import Proximity
import Watch

/// `/state`: the peer table and the thresholds the page draws.
struct StateSnapshot: Encodable {
    var rigs: [LiveView.Rig]
    var near: Double
    var far: Double

    init(view: LiveView, near: Double, far: Double) {
        rigs = view.rigs.values.sorted { $0.node < $1.node }
        self.near = near
        self.far = far
    }
}
