import CLibUSB
import Dispatch
import Glibc
import Synchronization
import StreamIO
import UCIHost

/// FiRa UCI over a board's CDC-ACM bulk endpoints, driven directly through libusb.
///
/// Opening detaches the kernel's `cdc_acm` driver (re-attached on close, so /dev/ttyACM* comes
/// back), claims the interfaces, asserts DTR (many nRF52 CDC firmwares send nothing until DTR is
/// set) and keeps two bulk IN transfers in flight. Transfers complete on the libusb event thread
/// and feed a `ByteQueue`; the UCI host's stream decoder does the framing and resynchronisation.
package final class USBTransport: UCITransport, @unchecked Sendable {
    // @unchecked: the raw libusb pointers are only used under `state`'s lock or by libusb's own
    // thread-safe calls; transfers are freed only after their final callback.
    private struct State {
        var closing = false
        var inFlight = 0
    }

    private let handle: OpaquePointer
    /// The bulk IN transfers, allocated once and freed only after their final callback.
    private var reads: [UnsafeMutablePointer<libusb_transfer>] = []
    private let interfaces: CDCInterfaces
    private let detached: [UInt8]
    private let incoming = ByteQueue()
    private let state = Mutex(State())
    /// Signalled by the last read transfer retired after `close` cancelled them.
    private let retired = DispatchSemaphore(value: 0)
    package let board: USBBoard
    package let description: String

    static let inTransfers = 2
    static let inTransferSize: Int32 = 4096
    static let writeTimeoutMilliseconds: UInt32 = 1000

    /// Opens `board` and starts reading.
    package static func open(_ board: USBBoard) throws(USBError) -> USBTransport {
        let context = try USBContext.get()
        guard let interfaces = board.interfaces else {
            throw USBError("find CDC-ACM data interface on \(board.location)", LIBUSB_ERROR_NOT_FOUND.rawValue)
        }
        let handle = try USBBoards.withDeviceList(context) { devices throws(USBError) -> OpaquePointer in
            guard let device = devices.first(where: { USBBoards.describe($0).map { $0.location == board.location && $0.address == board.address } == true }) else {
                throw USBError("find \(board.location)", LIBUSB_ERROR_NO_DEVICE.rawValue)
            }
            var handle: OpaquePointer?
            try USBError.check("libusb_open(\(board.location))", libusb_open(device, &handle))
            return handle!
        }
        var detached: [UInt8] = []
        var claimed: [UInt8] = []
        do {
            for number in [interfaces.control, interfaces.data].compactMap({ $0 }) {
                if libusb_kernel_driver_active(handle, Int32(number)) == 1 {
                    try USBError.check("detach kernel driver from interface \(number)", libusb_detach_kernel_driver(handle, Int32(number)))
                    detached.append(number)
                }
                try USBError.check("claim interface \(number)", libusb_claim_interface(handle, Int32(number)))
                claimed.append(number)
            }
            if let control = interfaces.control {
                try setLineState(handle, control: control)
            }
        } catch {
            for number in claimed { libusb_release_interface(handle, Int32(number)) }
            for number in detached { libusb_attach_kernel_driver(handle, Int32(number)) }
            libusb_close(handle)
            throw error
        }
        let transport = USBTransport(handle: handle, interfaces: interfaces, detached: detached, board: board)
        try transport.startReading()
        return transport
    }

    private init(handle: OpaquePointer, interfaces: CDCInterfaces, detached: [UInt8], board: USBBoard) {
        self.handle = handle
        self.interfaces = interfaces
        self.detached = detached
        self.board = board
        self.description = "usb:\(board.location)"
    }

    /// CDC SET_LINE_CODING 115200 8N1 (the rate is nominal on native USB) and
    /// SET_CONTROL_LINE_STATE with DTR and RTS, as opening /dev/ttyACM* would do.
    private static func setLineState(_ handle: OpaquePointer, control: UInt8) throws(USBError) {
        var lineCoding: [UInt8] = [0x00, 0xC2, 0x01, 0x00, 0x00, 0x00, 0x08]
        let coding = libusb_control_transfer(handle, 0x21, 0x20, 0, UInt16(control), &lineCoding, 7, 1000)
        // Some firmwares stall SET_LINE_CODING; only DTR matters to them.
        if coding < 0, coding != LIBUSB_ERROR_PIPE.rawValue { throw USBError("CDC SET_LINE_CODING", coding) }
        try USBError.check(
            "CDC SET_CONTROL_LINE_STATE (DTR)", libusb_control_transfer(handle, 0x21, 0x22, 0x0003, UInt16(control), nil, 0, 1000))
    }

    // MARK: Reading

    private func startReading() throws(USBError) {
        for _ in 0..<Self.inTransfers {
            guard let transfer = libusb_alloc_transfer(0) else { throw USBError("libusb_alloc_transfer", LIBUSB_ERROR_NO_MEM.rawValue) }
            transfer.pointee.dev_handle = handle
            transfer.pointee.endpoint = interfaces.bulkIn
            transfer.pointee.type = UInt8(LIBUSB_TRANSFER_TYPE_BULK.rawValue)
            transfer.pointee.timeout = 0
            transfer.pointee.buffer = malloc(Int(Self.inTransferSize)).assumingMemoryBound(to: UInt8.self)
            transfer.pointee.length = Self.inTransferSize
            transfer.pointee.flags = UInt8(LIBUSB_TRANSFER_FREE_BUFFER.rawValue)
            transfer.pointee.user_data = Unmanaged.passUnretained(self).toOpaque()
            transfer.pointee.callback = { transfer in
                guard let transfer else { return }
                Unmanaged<USBTransport>.fromOpaque(transfer.pointee.user_data).takeUnretainedValue().readCompleted(transfer)
            }
            reads.append(transfer)
        }
        for transfer in reads {
            state.withLock { $0.inFlight += 1 }
            let status = libusb_submit_transfer(transfer)
            if status != 0 {
                state.withLock { $0.inFlight -= 1 }
                throw USBError("submit bulk IN transfer", status)
            }
        }
    }

    /// Runs on the libusb event thread: hands the bytes on and resubmits, or retires the transfer.
    private func readCompleted(_ transfer: UnsafeMutablePointer<libusb_transfer>) {
        let status = transfer.pointee.status
        if status == LIBUSB_TRANSFER_COMPLETED, transfer.pointee.actual_length > 0 {
            incoming.push(borrowing: UnsafeRawBufferPointer(start: transfer.pointee.buffer, count: Int(transfer.pointee.actual_length)))
        }
        let closing = state.withLock { $0.closing }
        var failure: TransportError? =
            switch status {
            case LIBUSB_TRANSFER_COMPLETED, LIBUSB_TRANSFER_TIMED_OUT, LIBUSB_TRANSFER_CANCELLED: nil
            case LIBUSB_TRANSFER_NO_DEVICE: .system(call: "bulk IN", errno: ENODEV, message: "the board was unplugged")
            case LIBUSB_TRANSFER_STALL: .system(call: "bulk IN", errno: EPIPE, message: "endpoint stalled")
            case LIBUSB_TRANSFER_OVERFLOW: .system(call: "bulk IN", errno: EOVERFLOW, message: "the board sent more than requested")
            default: .system(call: "bulk IN", errno: EIO, message: "transfer error")
            }
        if !closing, failure == nil {
            let resubmit = libusb_submit_transfer(transfer)
            if resubmit == 0 { return }
            failure = .system(
                call: "resubmit bulk IN", errno: resubmit == LIBUSB_ERROR_NO_DEVICE.rawValue ? ENODEV : EIO,
                message: String(cString: libusb_error_name(resubmit)))
        }
        if let failure, !closing { incoming.finish(failure: failure) }
        let last = state.withLock { s in
            s.inFlight -= 1
            return s.closing && s.inFlight == 0
        }
        if last { retired.signal() }
    }

    /// Bytes go from libusb's event thread straight into the UCI host's decoder.
    package func deliverReads(to receive: @escaping ByteQueue.Receiver) -> Bool {
        incoming.deliver(to: receive)
        return true
    }

    package func read() async throws -> [UInt8]? {
        try await incoming.next()
    }

    // MARK: Writing

    /// A write's outcome, resumed by its transfer's callback on the libusb event thread.
    private typealias WriteCompletion = ReplySlot<Void, USBError>

    package func write(_ bytes: [UInt8]) async throws {
        guard !state.withLock({ $0.closing }) else { throw TransportError.closed }
        try await submitWrite(bytes).result.get()
    }

    private func submitWrite(_ bytes: [UInt8]) -> WriteCompletion {
        let completion = WriteCompletion()
        guard let transfer = libusb_alloc_transfer(0) else {
            completion.resume(with: .failure(USBError("libusb_alloc_transfer", LIBUSB_ERROR_NO_MEM.rawValue)))
            return completion
        }
        let buffer = malloc(max(bytes.count, 1)).assumingMemoryBound(to: UInt8.self)
        bytes.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: bytes.count) }
        transfer.pointee.dev_handle = handle
        transfer.pointee.endpoint = interfaces.bulkOut
        transfer.pointee.type = UInt8(LIBUSB_TRANSFER_TYPE_BULK.rawValue)
        transfer.pointee.timeout = Self.writeTimeoutMilliseconds
        transfer.pointee.buffer = buffer
        transfer.pointee.length = Int32(bytes.count)
        transfer.pointee.flags = UInt8(LIBUSB_TRANSFER_FREE_BUFFER.rawValue | LIBUSB_TRANSFER_FREE_TRANSFER.rawValue)
        transfer.pointee.user_data = Unmanaged.passRetained(completion).toOpaque()
        transfer.pointee.callback = { transfer in
            guard let transfer else { return }
            let completion = Unmanaged<WriteCompletion>.fromOpaque(transfer.pointee.user_data).takeRetainedValue()
            switch transfer.pointee.status {
            case LIBUSB_TRANSFER_COMPLETED where transfer.pointee.actual_length == transfer.pointee.length:
                completion.resume(with: .success(()))
            case LIBUSB_TRANSFER_NO_DEVICE:
                completion.resume(with: .failure(USBError("bulk OUT", LIBUSB_ERROR_NO_DEVICE.rawValue)))
            case LIBUSB_TRANSFER_TIMED_OUT:
                completion.resume(with: .failure(USBError("bulk OUT", LIBUSB_ERROR_TIMEOUT.rawValue)))
            default:
                completion.resume(with: .failure(USBError("bulk OUT", LIBUSB_ERROR_IO.rawValue)))
            }
        }
        let status = libusb_submit_transfer(transfer)
        if status != 0 {
            Unmanaged<WriteCompletion>.fromOpaque(transfer.pointee.user_data).release()
            libusb_free_transfer(transfer)
            completion.resume(with: .failure(USBError("submit bulk OUT transfer", status)))
        }
        return completion
    }

    // MARK: Closing

    /// Cancels the reads, waits (at most a second, on the monotonic clock) for libusb to hand the
    /// transfers back on its event thread, releases the interfaces and gives them back to the kernel driver, so
    /// /dev/ttyACM* reappears. Synchronous, so a process exiting right after `close` leaves the
    /// board as it found it.
    package func close() {
        let alreadyClosing = state.withLock { s in
            defer { s.closing = true }
            return s.closing
        }
        guard !alreadyClosing else { return }
        incoming.finish()
        // Transfers that already finished answer LIBUSB_ERROR_NOT_FOUND, which is fine.
        for transfer in reads { libusb_cancel_transfer(transfer) }
        if state.withLock({ $0.inFlight }) > 0 { _ = retired.wait(timeout: .now() + .seconds(1)) }
        if state.withLock({ $0.inFlight }) == 0 {
            for transfer in reads { libusb_free_transfer(transfer) }
        }  // else libusb still owns them: leaking two transfers beats freeing memory in use.
        for number in [interfaces.control, interfaces.data].compactMap({ $0 }) {
            libusb_release_interface(handle, Int32(number))
        }
        for number in detached { libusb_attach_kernel_driver(handle, Int32(number)) }
        libusb_close(handle)
    }
}
