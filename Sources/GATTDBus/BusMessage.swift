import CSystemd

/// One sd-bus message, used on the bus thread only (sd-bus is not thread-safe): typed reads and
/// appends over sd-bus's non-variadic calls, which are the ones Swift can call. Does not own the
/// message; whoever made it unreferences it.
struct BusMessage {
    let raw: OpaquePointer

    var path: String? { sd_bus_message_get_path(raw).map { String(cString: $0) } }
    var interface: String? { sd_bus_message_get_interface(raw).map { String(cString: $0) } }
    var member: String? { sd_bus_message_get_member(raw).map { String(cString: $0) } }
    var sender: String? { sd_bus_message_get_sender(raw).map { String(cString: $0) } }

    func isMethodCall(_ interface: String, _ member: String) -> Bool {
        sd_bus_message_is_method_call(raw, interface, member) > 0
    }

    // MARK: reading

    /// A string, or with `type` "o" an object path: both are text on the wire.
    func readString(_ type: Unicode.Scalar = "s") throws(BusFailure) -> String {
        var text: UnsafePointer<CChar>?
        try BusFailure.check(sd_bus_message_read_basic(raw, Self.type(type), &text), "sd_bus_message_read_basic(\(type))")
        return text.map { String(cString: $0) } ?? ""
    }

    func readBytes() throws(BusFailure) -> [UInt8] {
        var pointer: UnsafeRawPointer?
        var size = 0
        try BusFailure.check(sd_bus_message_read_array(raw, Self.type("y"), &pointer, &size), "sd_bus_message_read_array(y)")
        guard let pointer, size > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: size))
    }

    /// An `a{sv}` dictionary (BlueZ's method options), keeping the values of the types in
    /// `BusValue` that are basic (s, o, b, q) and skipping any other.
    func readOptions() throws(BusFailure) -> [String: BusValue] {
        var options: [String: BusValue] = [:]
        try enter("a", "{sv}")
        while try BusFailure.check(sd_bus_message_enter_container(raw, Self.type("e"), "sv"), "sd_bus_message_enter_container(e)") > 0 {
            let key = try readString()
            var kind: CChar = 0
            var contents: UnsafePointer<CChar>?
            try BusFailure.check(sd_bus_message_peek_type(raw, &kind, &contents), "sd_bus_message_peek_type")
            let signature = contents.map { String(cString: $0) } ?? ""
            try enter("v", signature)
            switch signature {
            case "s": options[key] = .string(try readString())
            case "o": options[key] = .objectPath(try readString("o"))
            case "b":
                var flag: Int32 = 0
                try BusFailure.check(sd_bus_message_read_basic(raw, Self.type("b"), &flag), "sd_bus_message_read_basic(b)")
                options[key] = .bool(flag != 0)
            case "q":
                var number: UInt16 = 0
                try BusFailure.check(sd_bus_message_read_basic(raw, Self.type("q"), &number), "sd_bus_message_read_basic(q)")
                options[key] = .uint16(number)
            default:
                try BusFailure.check(sd_bus_message_skip(raw, signature), "sd_bus_message_skip")
            }
            try exit()  // v
            try exit()  // e
        }
        try exit()  // a
        return options
    }

    // MARK: appending

    func append(_ value: BusValue) throws(BusFailure) {
        switch value {
        case .string(let text): try appendText("s", text)
        case .objectPath(let path): try appendText("o", path)
        case .bool(let flag):
            var number: Int32 = flag ? 1 : 0
            try BusFailure.check(sd_bus_message_append_basic(raw, Self.type("b"), &number), "sd_bus_message_append_basic(b)")
        case .uint16(var number):
            try BusFailure.check(sd_bus_message_append_basic(raw, Self.type("q"), &number), "sd_bus_message_append_basic(q)")
        case .strings(let texts):
            try open("a", "s")
            for text in texts { try appendText("s", text) }
            try close()
        case .bytes(let bytes):
            let result = bytes.withUnsafeBytes { buffer in
                // sd-bus wants a pointer even for an empty array.
                sd_bus_message_append_array(raw, Self.type("y"), buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, buffer.count)
            }
            try BusFailure.check(result, "sd_bus_message_append_array(y)")
        case .objectPaths(let paths):
            try open("a", "o")
            for path in paths { try appendText("o", path) }
            try close()
        }
    }

    /// A variant holding `value`.
    func appendVariant(_ value: BusValue) throws(BusFailure) {
        try open("v", value.signature)
        try append(value)
        try close()
    }

    /// An `a{sv}` dictionary, in the order given.
    func appendProperties(_ properties: [(name: String, value: BusValue)]) throws(BusFailure) {
        try open("a", "{sv}")
        for (name, value) in properties {
            try open("e", "sv")
            try appendText("s", name)
            try appendVariant(value)
            try close()
        }
        try close()
    }

    func open(_ type: Unicode.Scalar, _ contents: String) throws(BusFailure) {
        try BusFailure.check(sd_bus_message_open_container(raw, Self.type(type), contents), "sd_bus_message_open_container(\(type))")
    }

    func close() throws(BusFailure) {
        try BusFailure.check(sd_bus_message_close_container(raw), "sd_bus_message_close_container")
    }

    // MARK: private

    private func appendText(_ type: Unicode.Scalar, _ text: String) throws(BusFailure) {
        // For the string types sd-bus takes the string itself, not a pointer to it.
        let result = text.withCString { sd_bus_message_append_basic(raw, Self.type(type), $0) }
        try BusFailure.check(result, "sd_bus_message_append_basic(\(type))")
    }

    private func enter(_ type: Unicode.Scalar, _ contents: String) throws(BusFailure) {
        try BusFailure.check(sd_bus_message_enter_container(raw, Self.type(type), contents), "sd_bus_message_enter_container(\(type))")
    }

    private func exit() throws(BusFailure) {
        try BusFailure.check(sd_bus_message_exit_container(raw), "sd_bus_message_exit_container")
    }

    private static func type(_ scalar: Unicode.Scalar) -> CChar { CChar(UInt8(ascii: scalar)) }
}
