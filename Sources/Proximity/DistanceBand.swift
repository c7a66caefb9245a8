/// How close the nearest peer is, in words ("getting warmer").
package enum DistanceBand: String, Sendable, CaseIterable {
    /// Within the contact clearance (30 cm by default): about to bump, or handing something over.
    case immediate
    /// Within the near zone's threshold.
    case near
    case medium
    case far
}
