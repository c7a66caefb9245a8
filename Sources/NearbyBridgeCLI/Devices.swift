import ArgumentParser
import BLEBlueZ
import ByteCoding
import Doctor
import Logging
import UCI
import UCIHost
import UCIUSB

struct Devices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List UWB boards on USB and Bluetooth adapters, and what each UWB board says about itself.",
        discussion: """
            For each USB device that is a known UWB board or has a CDC-ACM data interface: its \
            BUS-PORT (for --uwb usb:BUS-PORT), ids, product, serial, whether this user may open it, \
            whether the kernel's cdc_acm driver holds it, and, when it can be opened, the UCI \
            device info (UCI/MAC/PHY versions, vendor data) and capabilities. Opening a board \
            detaches cdc_acm for a moment; it is re-attached afterwards. The listing goes to \
            stdout (this command writes no events).
            """)

    @Option(help: "Log level on stderr.")
    var logLevel: Logger.Level = .warning

    @Option(help: "How long to wait for a board to answer UCI commands, in seconds.")
    var timeout: Double = 2

    func run() async throws {
        var logger = Logger(label: "nearby-bridge")
        logger.logLevel = logLevel
        print("UWB boards on USB:")
        do {
            let boards = try USBBoards.list()
            if boards.isEmpty { print("  none (no known board and no CDC-ACM device; check the cable and `lsusb`)") }
            for board in boards { await describe(board, logger: logger) }
        } catch {
            print("  cannot enumerate USB: \(error)")
        }
        print("Bluetooth adapters:")
        let adapters = BlueZProbe.adapterNames()
        if adapters.isEmpty {
            print("  none: " + BlueZProbe.explain(BlueZProbe.probe(adapter: "hci0")))
        }
        for name in adapters { print("  \(name): " + BlueZProbe.explain(BlueZProbe.probe(adapter: name))) }
    }

    private func describe(_ board: USBBoard, logger: Logger) async {
        print("  usb:\(board.location)  \(board.ids)  \([board.manufacturer, board.product].compactMap { $0 }.joined(separator: " "))"
            + (board.serial.map { "  serial \($0)" } ?? ""))
        print("    match: " + (board.match?.name ?? "not a known UWB board (generic CDC-ACM device)"))
        if let cdc = board.interfaces {
            print("    CDC-ACM: control interface \(cdc.control.map(String.init) ?? "none"), data interface \(cdc.data), "
                + "bulk IN 0x\(String(cdc.bulkIn, radix: 16)), bulk OUT 0x\(String(cdc.bulkOut, radix: 16))")
        }
        let access = USBAccess.inspect(board)
        print("    kernel driver: " + (access.kernelDriver ?? "none bound"))
        if let error = access.openError {
            print("    access: no — \(error)" + (Doctor.remedy(for: error).map { "; \($0)" } ?? ""))
            return
        }
        print("    access: yes")
        guard board.match != nil else { return }
        do {
            let transport = try USBTransport.open(board)
            let host = UCIHost(transport: transport, commandTimeout: .seconds(timeout), logger: logger) { _ in }
            await host.start()
            defer { transport.close() }
            let info = try await host.deviceInfo()
            print("    UCI \(info.uciVersion), MAC \(info.macVersion), PHY \(info.phyVersion), test \(info.uciTestVersion), "
                + "vendor data \(info.vendorDataHex)")
            let capabilities = try await host.capabilities()
            print("    capabilities: " + capabilities.map { tlv in
                "0x" + String(tlv.type, radix: 16) + "=" + tlv.value.hexString
            }.joined(separator: " "))
        } catch {
            print("    UCI: no answer — \(error)")
        }
    }
}
