import Testing

@testable import UCIUSB

@Suite struct BoardSelectionTests {
    func board(_ location: [UInt8], product: String?, vid: UInt16 = 0x1915, pid: UInt16 = 0x520F, serial: String? = nil, cdc: Bool = true)
        -> USBBoard
    {
        USBBoard(
            bus: 1, ports: location, address: 2, vendorID: vid, productID: pid, manufacturer: nil, product: product,
            serial: serial,
            interfaces: cdc ? CDCInterfaces(control: 0, data: 1, bulkIn: 0x81, bulkOut: 0x01, maxPacketSize: 64) : nil,
            match: BoardMatch.known.first { $0.matches(vendorID: vid, product: product) })
    }

    @Test func matchesByVendorAndProductStringWhateverThePID() {
        for pid: UInt16 in [0x520F, 0x521F, 0xCAFE] {
            #expect(board([1], product: "nRF52 USB Product", pid: pid).match != nil)
        }
        #expect(board([1], product: "nRF52 USB Product", vid: 0x1366).match == nil)  // a SEGGER J-Link
        #expect(board([1], product: "Some Modem").match == nil)
        #expect(board([1], product: nil).match == nil)
    }

    @Test func picksTheOnlyKnownBoardAndIgnoresGenericCDCDevices() throws {
        let uwb = board([2], product: "nRF52 USB Product", serial: "0123456789AB")
        let modem = board([1], product: "Some Modem", vid: 0x2C7C)
        #expect(try USBBoards.select(nil, from: [modem, uwb]) == uwb)
    }

    @Test func selectsByLocationOrSerial() throws {
        let a = board([1, 2], product: "nRF52 USB Product", serial: "AAAA")
        let b = board([1, 3], product: "nRF52 USB Product", serial: "BBBB")
        #expect(try USBBoards.select("1-1.3", from: [a, b]) == b)
        #expect(try USBBoards.select("AAAA", from: [a, b]) == a)
        #expect(a.location == "1-1.2")
    }

    @Test func explainsWhatToTypeWhenTheChoiceIsUnclear() {
        let a = board([1, 2], product: "nRF52 USB Product", serial: "AAAA")
        let b = board([1, 3], product: "nRF52 USB Product", serial: "BBBB")
        #expect(throws: USBBoardError.ambiguous(["usb:1-1.2 1915:520f nRF52 USB Product serial AAAA", "usb:1-1.3 1915:520f nRF52 USB Product serial BBBB"])) {
            try USBBoards.select(nil, from: [a, b])
        }
        let modem = board([4], product: "Some Modem", vid: 0x2C7C, pid: 0x0125)
        #expect(throws: USBBoardError.noBoard(candidates: ["usb:1-4 2c7c:0125 Some Modem"])) { try USBBoards.select(nil, from: [modem]) }
        #expect(throws: USBBoardError.notFound(selector: "9-9", seen: [])) { try USBBoards.select("9-9", from: []) }
        #expect(USBBoardError.noBoard(candidates: ["x"]).description.contains("--uwb usb:BUS-PORT"))
    }

    /// What happened, not how to fix it: that is `Doctor.remedy(for:)` (DoctorTests).
    @Test func accessErrorsSayWhatHappened() {
        let denied = USBError("libusb_open", -3)  // LIBUSB_ERROR_ACCESS
        #expect(denied.isAccessDenied)
        #expect(denied.description == "libusb_open failed: LIBUSB_ERROR_ACCESS (permission denied)")
        #expect(USBError("libusb_claim_interface", -6).isBusy)  // LIBUSB_ERROR_BUSY
        #expect(USBError("bulk OUT", -4).description.contains("unplugged"))  // LIBUSB_ERROR_NO_DEVICE
    }
}
