/// One value per side.
struct BySide<Value> {
    var c: Value
    var r: Value
    init(c: Value, r: Value) {
        self.c = c
        self.r = r
    }
    init(both: Value) { self.init(c: both, r: both) }
    subscript(side: Side) -> Value {
        get { side == .c ? c : r }
        set { if side == .c { c = newValue } else { r = newValue } }
    }
}
