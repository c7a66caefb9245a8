/// One connection-oriented channel to a peer (an L2CAP CoC on real radios).
package typealias LinkID = UInt32
