/// The NLoS octet: 0 line of sight, 1 non-line of sight, anything else (0xFF) unknown.
package enum LineOfSight: Hashable, Sendable {
    case lineOfSight, nonLineOfSight, unknown(UInt8)

    init(rawValue: UInt8) {
        switch rawValue {
        case 0: self = .lineOfSight
        case 1: self = .nonLineOfSight
        default: self = .unknown(rawValue)
        }
    }

    var rawValue: UInt8 {
        switch self {
        case .lineOfSight: 0
        case .nonLineOfSight: 1
        case .unknown(let value): value
        }
    }
}
