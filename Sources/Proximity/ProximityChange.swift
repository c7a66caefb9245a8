package enum ProximityChange: Sendable, Equatable {
    case near(distance: Double)
    case far(distance: Double)
    /// Contact detected; the bridge starts the profile drop.
    case contact(distance: Double)
}
