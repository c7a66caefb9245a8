/// MULTI_NODE_MODE values.
package enum MultiNodeMode: UInt8, Sendable { case unicast = 0, oneToMany = 1 }
