/// How a known board shows up on USB. The DWM3001CDK's product id is not fixed across
/// firmware builds, so boards are matched by vendor and product string, never by a single PID.
package struct BoardMatch: Sendable, Equatable {
    package var vendorID: UInt16
    package var productContains: String
    package var name: String

    package static let known: [BoardMatch] = [
        BoardMatch(
            vendorID: 0x1915, productContains: "nRF52 USB Product",
            name: "Qorvo DWM3001CDK (nRF52833 native USB, QM33 SDK UCI firmware)"),
        BoardMatch(vendorID: 0x1915, productContains: "DWM3001", name: "Qorvo DWM3001 family"),
        BoardMatch(vendorID: 0x1915, productContains: "QM33", name: "Qorvo QM33 family"),
    ]

    func matches(vendorID: UInt16, product: String?) -> Bool {
        vendorID == self.vendorID && product?.contains(productContains) == true
    }
}
