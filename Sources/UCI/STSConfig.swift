/// STS_CONFIG values.
package enum STSConfig: UInt8, Sendable {
    case staticSTS = 0, dynamic = 1, dynamicWithSubSessionKey = 2, provisioned = 3, provisionedWithSubSessionKey = 4
}
