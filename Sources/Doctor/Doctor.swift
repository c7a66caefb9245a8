import BLE
import BLEBlueZ
import BlueZMgmt
import Glibc
import Logging
import Proximity
import UCI
import UCIHost
import UCIUSB

/// Checks everything a rig needs, radio by radio, and says precisely what is missing: missing
/// permissions look like flaky radios, so each check names the permission and how to grant it.
package enum Doctor {
    package static func examine(logger: Logger, calibration: CalibrationRecords? = nil) async -> [Finding] {
        var findings = [kernel()]
        findings += await uwb(logger: logger, calibration: calibration)
        findings += await bluetooth()
        return findings
    }

    static func kernel() -> Finding {
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let machine = withUnsafeBytes(of: name.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return Finding("kernel", .info, "Linux \(release) on \(machine)")
    }

    // MARK: UWB

    static func uwb(logger: Logger, calibration: CalibrationRecords?) async -> [Finding] {
        var findings: [Finding] = []
        let rules = ["/etc/udev/rules.d/70-nearby-bridge.rules", "/lib/udev/rules.d/70-nearby-bridge.rules"]
        if rules.contains(where: { access($0, R_OK) == 0 }) {
            findings.append(Finding("udev rules", .ok, "70-nearby-bridge.rules is installed"))
        } else {
            findings.append(
                Finding(
                    "udev rules", .warn, "70-nearby-bridge.rules is not installed, so only root can open UWB boards",
                    fix: Remedy.udevRules))
        }
        findings.append(groupMembership())

        let boards: [USBBoard]
        do {
            boards = try USBBoards.list()
        } catch {
            findings.append(Finding("USB", .fail, "cannot enumerate USB devices: \(error)", fix: "check that /sys/bus/usb and /dev/bus/usb exist (a container may hide them)"))
            return findings
        }
        let known = boards.filter { $0.match != nil }
        guard !known.isEmpty else {
            let others = boards.map(USBBoards.summary)
            findings.append(
                Finding(
                    "UWB board", .fail,
                    "no known UWB board on USB" + (others.isEmpty ? "" : " (CDC-ACM devices present: \(others.joined(separator: "; ")))"),
                    fix: "plug the DWM3001CDK in by its J20 (nRF52 USB) port, not J9 (J-Link); `lsusb -d 1915:` should list it; see firmware-notes/"))
            return findings
        }
        for board in known {
            let label = "UWB board usb:\(board.location)"
            let access = USBAccess.inspect(board)
            if let error = access.openError {
                findings.append(
                    Finding(
                        label, .fail, "\(board.ids) \(board.product ?? "") is present but cannot be opened: \(error.name)",
                        fix: remedy(for: error)))
                continue
            }
            findings.append(Finding(label, .ok, "\(board.ids) \(board.product ?? "") serial \(board.serial ?? "?"), accessible"))
            do {
                let transport = try USBTransport.open(board)
                defer { transport.close() }
                let host = UCIHost(transport: transport, commandTimeout: .seconds(2), logger: logger) { _ in }
                await host.start()
                let info = try await host.deviceInfo()
                findings.append(Finding("\(label) UCI", .ok, "answers UCI \(info.uciVersion) (MAC \(info.macVersion), PHY \(info.phyVersion))"))
                let key = info.boardKey(serial: board.serial)
                findings.append(calibrationFinding(label: label, board: key, records: calibration))
                findings.append(rangePolicyFinding(label: label, info: info, calibrated: calibration.map { $0.boards.contains(key) }))
            } catch {
                findings.append(
                    Finding(
                        "\(label) UCI", .fail, "does not answer FiRa UCI: \(error)",
                        fix: remedy(for: error)
                            ?? "flash the UCI firmware (DWM3001CDK-DW3_QM33_SDK_UCI-FreeRTOS.hex, see firmware-notes/dwm3001cdk.md) and replug"))
            }
        }
        return findings
    }

    /// An uncalibrated board reads a constant few centimetres to tens of centimetres off: near
    /// the bump threshold that decides whether a hand-over bumps.
    package static func calibrationFinding(label: String, board: String, records: CalibrationRecords?) -> Finding {
        guard let records else {
            return Finding(
                "\(label) calibration", .info, "not checked (board \(board)): give the rig's settings file, doctor --config FILE")
        }
        if records.boards.contains(board) {
            return Finding("\(label) calibration", .ok, "board \(board) has an offset in \(records.path)")
        }
        return Finding(
            "\(label) calibration", .warn,
            "board \(board) has no offset in \(records.path): it may read centimetres short or long, and hand-overs may bump",
            fix: "nearby-bridge calibrate --config \(records.path) (with a reference peer, touching then 1.00 m apart; README, \"Calibration\")")
    }

    /// How the bridge will read this board's ranges (docs/PROXIMITY.md, "Range correction"): a
    /// board without RSSI gets no bias correction and bumps from distance alone, which lets more
    /// hand-overs bump; the fix is firmware that reports it.
    package static func rangePolicyFinding(label: String, info: DeviceInfo, calibrated: Bool?) -> Finding {
        let correction = RangeCorrection(table: .aps011PRF64, tableName: "aps011-prf64", calibrated: calibrated == true)
        guard info.uciVersion.major >= 2 else {
            return Finding(
                "\(label) range correction", .warn,
                "UCI \(info.uciVersion) range data has no RSSI: \(correction.policy(asksRSSI: false)); hand-overs 15–25 cm apart may bump",
                fix: "flash firmware that speaks UCI 2.0 and honours RSSI_REPORTING (firmware-notes/rssi.md)")
        }
        return Finding(
            "\(label) range correction", .ok,
            "UCI \(info.uciVersion): RSSI asked (RSSI_REPORTING 1); \(correction.policy(asksRSSI: true))")
    }

    static func groupMembership() -> Finding {
        guard let group = getgrnam("nearby") else {
            return Finding("group nearby", .warn, "the group does not exist", fix: "sudo groupadd -f nearby && sudo usermod -aG nearby $USER")
        }
        let gid = group.pointee.gr_gid
        var groups = [gid_t](repeating: 0, count: 256)
        let count = getgroups(Int32(groups.count), &groups)
        if getuid() == 0 || getegid() == gid || groups.prefix(Int(max(count, 0))).contains(gid) {
            return Finding("group nearby", .ok, getuid() == 0 ? "running as root" : "this user is a member")
        }
        return Finding("group nearby", .warn, "this user is not in it", fix: Remedy.joinGroup)
    }

    // MARK: Bluetooth

    static func bluetooth() async -> [Finding] {
        var findings: [Finding] = []
        if case .noKernelSupport(let code) = BlueZProbe.probe(adapter: "hci0") {
            findings.append(
                Finding(
                    "Bluetooth kernel support", .fail, "socket(AF_BLUETOOTH) failed: \(String(cString: strerror(code)))",
                    fix: Remedy.kernelBluetooth))
            return findings
        }
        findings.append(Finding("Bluetooth kernel support", .ok, "AF_BLUETOOTH sockets are available"))
        findings.append(capability())
        findings.append(bluetoothd())
        for (name, blocked) in rfkill() where blocked {
            findings.append(Finding("rfkill \(name)", .fail, "Bluetooth is blocked", fix: Remedy.rfkill))
        }
        let adapters = BlueZProbe.adapterNames()
        guard !adapters.isEmpty else {
            findings.append(
                Finding(
                    "Bluetooth adapter", .fail, "the kernel lists no adapter",
                    fix: "on a Raspberry Pi check `dtoverlay=disable-bt` is not set and hciuart.service runs; otherwise plug in a USB adapter"))
            return findings
        }
        for name in adapters {
            findings.append(await adapterState(name))
        }
        return findings
    }

    static func capability() -> Finding {
        let effective = effectiveCapabilities()
        let netAdmin: UInt64 = 1 << 12
        if let effective, effective & netAdmin != 0 {
            return Finding("CAP_NET_ADMIN", .ok, "present (needed for the Bluetooth management channel)")
        }
        return Finding(
            "CAP_NET_ADMIN", .fail, "missing: advertising and discovery through the management channel will be refused",
            fix: Remedy.netAdmin)
    }

    static func bluetoothd() -> Finding {
        Processes.running("bluetoothd")
            ? Finding("bluetoothd", .info, "running; nearby-bridge works beside it (own advertising instance, shared discovery)")
            : Finding("bluetoothd", .info, "not running; nearby-bridge does not need it")
    }

    static func rfkill() -> [(String, Bool)] {
        guard let directory = opendir("/sys/class/rfkill") else { return [] }
        defer { closedir(directory) }
        var entries: [(String, Bool)] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.hasPrefix("rfkill"), Sysfs.read("/sys/class/rfkill/\(name)/type") == "bluetooth" else { continue }
            let soft = Sysfs.read("/sys/class/rfkill/\(name)/soft") == "1"
            let hard = Sysfs.read("/sys/class/rfkill/\(name)/hard") == "1"
            entries.append((name, soft || hard))
        }
        return entries
    }

    static func adapterState(_ name: String) async -> Finding {
        do {
            let info = try await BlueZAdapter.readInfo(name)
            let powered = info.currentSettings.contains(.powered)
            let le = info.currentSettings.contains(.lowEnergy)
            return Finding(
                "Bluetooth \(name)", powered && le ? .ok : .warn,
                "\(info.name.isEmpty ? "adapter" : info.name): " + (powered ? "powered" : "powered off") + ", LE " + (le ? "on" : "off"),
                fix: powered && le ? nil : "nearby-bridge powers it on when it has CAP_NET_ADMIN; or `bluetoothctl power on`")
        } catch {
            return Finding("Bluetooth \(name)", .fail, "\(error)", fix: remedy(for: error))
        }
    }
}

/// Effective capabilities of this process (CapEff in /proc/self/status).
private func effectiveCapabilities() -> UInt64? {
    guard let status = Sysfs.read("/proc/self/status") else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("CapEff:") {
        return UInt64(line.dropFirst(7).trimmingPrefix(while: { $0 == " " || $0 == "\t" }), radix: 16)
    }
    return nil
}

private enum Processes {
    static func running(_ command: String) -> Bool {
        guard let directory = opendir("/proc") else { return false }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if Int(name) != nil, Sysfs.read("/proc/\(name)/comm") == command { return true }
        }
        return false
    }
}
