import BLE
import BlueZMgmt
import CBlueZ
import Glibc
import StreamIO
import Synchronization

/// Why the BlueZ backend failed. Each case says what happened; what to do about it is
/// `Doctor.remedy(for:)`'s business, which switches on these cases.
package enum BlueZError: Error, Equatable, Sendable, CustomStringConvertible {
    /// socket(AF_BLUETOOTH) failed with `errno`.
    case noKernelSupport(errno: Int32)
    case noAdapter(requested: String, available: [String])
    /// The kernel answered `command` with a status other than success.
    case command(MgmtOpcode, MgmtStatus)
    case timeout(MgmtOpcode)
    /// The reply to `command` could not be decoded.
    case malformedReply(MgmtOpcode, MgmtError)
    case socket(call: String, errno: Int32)
    case unsupported(String)

    package var description: String {
        switch self {
        case .noKernelSupport(let code): "this kernel has no Bluetooth support (socket(AF_BLUETOOTH): \(String(cString: strerror(code))))"
        case .noAdapter(let requested, let available):
            "no Bluetooth adapter \(requested)" + (available.isEmpty ? " (the kernel lists none)" : "; available: \(available.joined(separator: ", "))")
        case .command(let command, .permissionDenied):
            "\(command) was refused: the Bluetooth management channel needs CAP_NET_ADMIN, which this process lacks"
        case .command(let command, .rfkilled): "\(command) failed: the adapter is blocked by rfkill"
        case .command(let command, .busy) where command == .startDiscovery || command == .stopDiscovery:
            "\(command) failed: the adapter is busy discovering for another program"
        case .command(let command, .notPowered): "\(command) failed: the adapter is powered off and could not be powered on"
        case .command(let command, let status): "\(command) failed: \(status)"
        case .timeout(let command): "the kernel did not answer \(command)"
        case .malformedReply(let command, let error): "unreadable reply to \(command): \(error)"
        case .socket(let call, let code): "\(call) failed: \(String(cString: strerror(code)))"
        case .unsupported(let what): what
        }
    }
}

/// The kernel's Bluetooth management channel (HCI_CHANNEL_CONTROL): the interface bluetoothd
/// itself uses, shared by any number of clients. One thread reads every packet; replies resolve
/// the waiting command and events go to the handler, so no event is dropped while a command is
/// in flight.
final class MgmtSocket: Sendable {
    private struct Pending {
        var opcode: UInt16
        var index: UInt16
        var continuation: CheckedContinuation<(MgmtStatus, [UInt8]), any Error>
    }

    private let fd: Int32
    private let pending = Mutex<[Pending]>([])
    private let commandSlot = CommandSlot()
    private let handler = CallbackSlot<(UInt16, MgmtEvent)>()

    init() throws(BlueZError) {
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard fd >= 0 else { throw .noKernelSupport(errno: errno) }
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = UInt16(HCI_DEV_NONE)
        address.hci_channel = UInt16(HCI_CHANNEL_CONTROL)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_hci>.size)) }
        }
        guard bound == 0 else {
            let code = errno
            Glibc.close(fd)
            throw .socket(call: "bind(HCI_CHANNEL_CONTROL)", errno: code)
        }
        self.fd = fd
        startReading()
    }

    func onEvent(_ handler: @escaping @Sendable (UInt16, MgmtEvent) -> Void) {
        self.handler.install { handler($0.0, $0.1) }
    }

    /// Sends `command` to controller `index` and returns its reply's return parameters.
    func send(_ command: MgmtCommand, index: UInt16, timeout: Duration = .seconds(5)) async throws(BlueZError) -> [UInt8] {
        await commandSlot.acquire()
        defer { commandSlot.release() }
        let bytes = command.packet(index: index).encoded()
        let reply: (MgmtStatus, [UInt8])
        do {
            reply = try await withThrowingTaskGroup(of: (MgmtStatus, [UInt8]).self) { group in
                group.addTask {
                    try await withCheckedThrowingContinuation { continuation in
                        self.pending.withLock { $0.append(Pending(opcode: command.opcode, index: index, continuation: continuation)) }
                        if write(self.fd, bytes, bytes.count) != bytes.count {
                            let code = errno
                            self.resolve(opcode: command.opcode, index: index, with: .failure(BlueZError.socket(call: "write(mgmt)", errno: code)))
                        }
                    }
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    self.resolve(opcode: command.opcode, index: index, with: .failure(BlueZError.timeout(command.code)))
                    throw BlueZError.timeout(command.code)
                }
                let first = try await group.next()!
                group.cancelAll()
                return first
            }
        } catch let error as BlueZError {
            throw error
        } catch {
            throw .timeout(command.code)
        }
        guard reply.0 == .success else { throw .command(command.code, reply.0) }
        return reply.1
    }

    private func resolve(opcode: UInt16, index: UInt16, with result: Result<(MgmtStatus, [UInt8]), any Error>) {
        let waiter = pending.withLock { list -> Pending? in
            guard let i = list.firstIndex(where: { $0.opcode == opcode && $0.index == index }) else { return nil }
            return list.remove(at: i)
        }
        waiter?.continuation.resume(with: result)
    }

    private func startReading() {
        IOThread.detach(name: "bt-mgmt") { [self] in readLoop() }
    }

    private func readLoop() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            guard let packet = try? MgmtPacket(datagram: Array(buffer[0..<count])), let event = try? MgmtEvent(packet) else { continue }
            switch event {
            case .commandComplete(let opcode, let status, let parameters):
                resolve(opcode: opcode, index: packet.index, with: .success((status, parameters)))
            case .commandStatus(let opcode, let status):
                resolve(opcode: opcode, index: packet.index, with: .success((status, [])))
            default:
                handler((packet.index, event))
            }
        }
    }

    func close() {
        shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
    }
}

/// One mgmt command at a time from this process: replies carry only the opcode and index, so
/// two identical commands in flight could not be told apart.
final class CommandSlot: Sendable {
    private let state = Mutex<(busy: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func acquire() async {
        await withCheckedContinuation { continuation in
            let granted = state.withLock { s in
                if !s.busy {
                    s.busy = true
                    return true
                }
                s.waiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    func release() {
        let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
            if s.waiters.isEmpty {
                s.busy = false
                return nil
            }
            return s.waiters.removeFirst()
        }
        next?.resume()
    }
}
