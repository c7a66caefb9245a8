/// Q9.7 signed fixed-point degrees plus figure of merit (0-100).
///
/// Kept raw so re-encoding is lossless; `degrees` divides the two's complement by 128 as Android does.
package struct AngleMeasurement: Hashable, Sendable {
    package var rawQ9_7: Int16
    package var figureOfMerit: UInt8

    package var degrees: Double { Double(rawQ9_7) / 128 }

    package init(rawQ9_7: Int16, figureOfMerit: UInt8) {
        self.rawQ9_7 = rawQ9_7
        self.figureOfMerit = figureOfMerit
    }

    /// Rounds to the nearest 1/128 degree, clamping to the Q9.7 range (NaN becomes 0).
    package init(degrees: Double, figureOfMerit: UInt8) {
        let scaled = (degrees * 128).rounded()
        self.init(
            rawQ9_7: scaled.isNaN ? 0 : Int16(min(max(scaled, Double(Int16.min)), Double(Int16.max))),
            figureOfMerit: figureOfMerit)
    }
}
