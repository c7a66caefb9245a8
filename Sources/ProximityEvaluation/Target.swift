import Bridge
import Foundation
import Proximity
import Simulation

/// One quality target (issues 5, 14 and 29) and whether a run met it.
package struct Target: Sendable {
    /// The radio setup it was measured on (nil: the two-sided runs).
    package var setup: String?
    package var name: String
    package var measured: String
    package var met: Bool
}
