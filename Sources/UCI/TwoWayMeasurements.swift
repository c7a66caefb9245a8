/// A range notification's measurements: the first kept inline, any others in an array, so that
/// the usual notification (one peer per session) decodes without allocating for its list.
package struct TwoWayMeasurements: RandomAccessCollection, ExpressibleByArrayLiteral, Hashable, Sendable {
    /// Nil only when the list is empty.
    private var head: TwoWayMeasurement?
    private var tail: [TwoWayMeasurement] = []

    package init(_ measurements: [TwoWayMeasurement]) {
        head = measurements.first
        if measurements.count > 1 { tail = Array(measurements.dropFirst()) }
    }

    package init(arrayLiteral measurements: TwoWayMeasurement...) {
        self.init(measurements)
    }

    package var startIndex: Int { 0 }
    package var endIndex: Int { head == nil ? 0 : 1 + tail.count }

    package subscript(position: Int) -> TwoWayMeasurement {
        guard position != 0 else {
            guard let head else { preconditionFailure("index out of range") }
            return head
        }
        return tail[position - 1]
    }

    package mutating func append(_ measurement: TwoWayMeasurement) {
        if head == nil { head = measurement } else { tail.append(measurement) }
    }
}
