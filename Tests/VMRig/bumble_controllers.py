#!/usr/bin/env python3
"""N Bumble virtual BLE controllers on one simulated air, each served as H4 over TCP.

    bumble_controllers.py [--count 2] [--base-port 9100] [options]

Controller i listens on tcp 127.0.0.1:(BASE+i) (BASE 0: free ports chosen by the OS) and
speaks H4 (the UART framing: one packet-type byte, then the HCI packet). A qemu serial port
connected there (`-chardev socket,host=127.0.0.1,port=P,reconnect=1 -serial chardev:ID`) and
attached in the guest with `hci_uart_attach /dev/ttySn` gives the guest kernel an hciN driven
by this controller. All controllers share one bumble.link.LocalLink, so what one advertises
the others scan, and they can connect to each other (LE ACL, L2CAP, ...).

Controller i has the public address PREFIX:ii (default F0:F0:F0:F0:F0:00, :01, ...); the
kernel refuses to bring up a controller whose public address is 00:00:00:00:00:00.

When every port listens it prints one line on stderr:
    bumble_controllers: READY ports=9100,9101 addresses=F0:F0:F0:F0:F0:00,F0:F0:F0:F0:F0:01

Fault injection (for tests of adapter loss and recovery) through --control PATH, a Unix
stream socket taking one command per line and answering one line ("ok ..." / "error ..."):
    drop I [SECONDS]   close controller I's TCP connection and refuse new ones for SECONDS
                       (default 1); qemu (reconnect=1) reconnects afterwards. The guest sees a
                       dead UART: commands time out, then the kernel recovers after reconnect.
    hwerror I [CODE]   send HCI Hardware Error (code default 0): the kernel resets the
                       controller (hci_error_reset: close + reopen, adapter index kept).
    reset I            forget controller I's state (connections, advertising, scanning), as a
                       power-cycled chip would; the kernel is not told (combine with hwerror).
    status             one line per controller: index, port, address, connected or not
A command can also be sent with:  bumble_controllers.py ctl PATH COMMAND...

Bumble is pinned (see build-rig.sh) because this script patches a few of its controller
behaviours; see README.md "Bumble behaviour" for the list.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import sys

log = logging.getLogger("bumble_controllers")


def ctl_main(argv: list[str]) -> int:
    """`bumble_controllers.py ctl PATH COMMAND...`: send one control command, print the reply."""
    if len(argv) < 2:
        print("usage: bumble_controllers.py ctl CONTROL_SOCKET COMMAND [ARGS...]", file=sys.stderr)
        return 2
    path, command = argv[0], " ".join(argv[1:])
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        s.sendall(command.encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    reply = data.decode(errors="replace").rstrip("\n")
    print(reply)
    return 0 if reply.startswith("ok") else 1


# Everything below needs bumble (imported late so that `ctl` works with any python3).

def build_controller_class():
    from bumble import hci
    from bumble.controller import Controller

    class RigController(Controller):
        """Bumble's Controller with the rig's fixes; see README.md "Bumble behaviour"."""

        hci_logger: logging.Logger | None = None

        def on_hci_packet(self, packet):
            if self.hci_logger:
                self.hci_logger.info("[%s] host>ctrl %s", self.name, summarize(packet))
            super().on_hci_packet(packet)

        def send_hci_packet(self, packet):
            if self.hci_logger:
                self.hci_logger.info("[%s] ctrl>host %s", self.name, summarize(packet))
            super().send_hci_packet(packet)

    def summarize(packet) -> str:
        try:
            if isinstance(packet, hci.HCI_Command):
                return f"CMD {packet.name} 0x{packet.op_code:04X} {bytes(packet)[4:].hex()}"
            if isinstance(packet, hci.HCI_Event):
                return f"EVT {packet.name} {bytes(packet)[3:].hex()}"
            if isinstance(packet, hci.HCI_AclDataPacket):
                return f"ACL h=0x{packet.connection_handle:03X} pb={packet.pb_flag} len={len(packet.data)} {packet.data[:24].hex()}"
        except Exception:  # logging must never break the controller
            pass
        return type(packet).__name__

    return RigController


class Port:
    """One controller's TCP endpoint: at most one client (the qemu serial port) at a time."""

    def __init__(self, index: int, controller_factory, link, address: str, host: str, port: int):
        from bumble.transport.common import PacketParser

        self.index = index
        self.host = host
        self.port = port
        self.address = address
        self.controller_factory = controller_factory
        self.link = link
        self.writer: asyncio.StreamWriter | None = None
        self.refuse_until = 0.0
        self.parser = PacketParser()
        self.server: asyncio.AbstractServer | None = None
        self.controller = None
        self.new_controller()

    def new_controller(self):
        if self.controller is not None:
            self.link.remove_controller(self.controller)
        self.controller = self.controller_factory(
            f"C{self.index}", host_source=None, host_sink=self, link=self.link,
            public_address=self.address)
        self.parser.set_packet_sink(self.controller)

    # TransportSink protocol: packets from the controller to the host (guest kernel)
    def on_packet(self, packet: bytes) -> None:
        if self.writer is not None and not self.writer.is_closing():
            self.writer.write(packet)

    async def start(self, sock: socket.socket | None):
        if sock is not None:
            self.server = await asyncio.start_server(self.on_client, sock=sock)
        else:
            self.server = await asyncio.start_server(self.on_client, self.host, self.port)
        self.port = self.server.sockets[0].getsockname()[1]

    async def on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        loop = asyncio.get_running_loop()
        peer = writer.get_extra_info("peername")
        if loop.time() < self.refuse_until or self.writer is not None:
            log.info("controller %d: refusing connection from %s", self.index, peer)
            writer.close()
            return
        log.info("controller %d (%s): host connected from %s", self.index, self.address, peer)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.writer = writer
        self.parser.reset()
        try:
            while True:
                data = await reader.read(4096)
                if not data:
                    break
                try:
                    self.parser.feed_data(data)
                except Exception as e:  # bad framing: resynchronise on the next packet
                    log.warning("controller %d: bad H4 data (%s), resetting parser", self.index, e)
                    self.parser.reset()
        except (ConnectionError, OSError):
            pass
        finally:
            if self.writer is writer:
                self.writer = None
            writer.close()
            log.info("controller %d: host disconnected", self.index)

    def drop(self, seconds: float) -> None:
        self.refuse_until = asyncio.get_running_loop().time() + seconds
        if self.writer is not None:
            w, self.writer = self.writer, None
            w.close()

    def send_raw_event(self, payload: bytes) -> None:
        self.on_packet(payload)


async def serve_control(path: str, ports: list[Port]):
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        try:
            while line := await reader.readline():
                words = line.decode(errors="replace").split()
                writer.write((run_command(words, ports) + "\n").encode())
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    if os.path.exists(path):
        os.unlink(path)
    return await asyncio.start_unix_server(handle, path=path)


def run_command(words: list[str], ports: list[Port]) -> str:
    try:
        if not words:
            return "error empty command"
        cmd = words[0]
        if cmd == "status":
            return "ok " + "; ".join(
                f"{p.index} port={p.port} address={p.address} "
                f"{'connected' if p.writer else 'disconnected'}" for p in ports)
        if len(words) < 2:
            return f"error usage: {cmd} INDEX ..."
        port = ports[int(words[1])]
        if cmd == "drop":
            seconds = float(words[2]) if len(words) > 2 else 1.0
            port.drop(seconds)
            return f"ok dropped {port.index} for {seconds}s"
        if cmd == "hwerror":
            code = int(words[2], 0) if len(words) > 2 else 0
            port.send_raw_event(bytes([0x04, 0x10, 0x01, code & 0xFF]))
            return f"ok hardware error 0x{code:02x} sent on {port.index}"
        if cmd == "reset":
            port.new_controller()
            return f"ok controller {port.index} state reset"
        return f"error unknown command {cmd}"
    except (IndexError, ValueError) as e:
        return f"error {e}"


def bind_free(host: str) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, 0))
    return s


async def async_main(args) -> int:
    from bumble import hci
    from bumble.link import LocalLink

    controller_class = build_controller_class()
    if args.log_hci:
        hci_log = logging.getLogger("hci")
        handler = logging.StreamHandler(sys.stderr) if args.log_hci == "-" else logging.FileHandler(args.log_hci, mode="w")
        handler.setFormatter(logging.Formatter("%(relativeCreated)9.0f %(message)s"))
        hci_log.addHandler(handler)
        hci_log.setLevel(logging.INFO)
        hci_log.propagate = False
        controller_class.hci_logger = hci_log

    def factory(*a, **kw):
        c = controller_class(*a, **kw)
        if not args.ext_adv:
            c.le_features &= ~(hci.LeFeatureMask.LE_EXTENDED_ADVERTISING
                               | hci.LeFeatureMask.LE_PERIODIC_ADVERTISING)
        return c

    link = LocalLink()
    ports: list[Port] = []
    for i in range(args.count):
        address = f"{args.address_prefix}:{i:02X}"
        port = Port(i, factory, link, address, args.host, args.base_port + i if args.base_port else 0)
        await port.start(None if args.base_port else bind_free(args.host))
        ports.append(port)

    control = await serve_control(args.control, ports) if args.control else None

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(sig, stop.set)

    print("bumble_controllers: READY ports=%s addresses=%s%s" % (
        ",".join(str(p.port) for p in ports), ",".join(p.address for p in ports),
        f" control={args.control}" if args.control else ""), file=sys.stderr, flush=True)
    if args.ports_file:
        tmp = args.ports_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(" ".join(str(p.port) for p in ports) + "\n")
        os.replace(tmp, args.ports_file)

    await stop.wait()
    for p in ports:
        p.drop(0)
        if p.server:
            p.server.close()
    if control:
        control.close()
        try:
            os.unlink(args.control)
        except OSError:
            pass
    return 0


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "ctl":
        return ctl_main(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=2, help="number of controllers (default 2)")
    ap.add_argument("--base-port", type=int, default=0,
                    help="controller i listens on BASE+i; 0 (default): free ports")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--address-prefix", default="F0:F0:F0:F0:F0",
                    help="first five bytes of the public addresses (default F0:F0:F0:F0:F0)")
    ap.add_argument("--ext-adv", dest="ext_adv", action="store_true", default=True,
                    help="claim LE Extended Advertising (default): the kernel uses extended "
                         "advertising, scanning and connection commands")
    ap.add_argument("--no-ext-adv", dest="ext_adv", action="store_false",
                    help="clear the LE Extended Advertising feature bit: the kernel uses the "
                         "legacy LE commands and Bumble sends legacy advertising reports")
    ap.add_argument("--control", metavar="PATH", help="Unix socket for fault injection commands")
    ap.add_argument("--ports-file", metavar="FILE", help="also write the ports, space separated, to FILE")
    ap.add_argument("--log-hci", metavar="FILE", help="log every HCI packet (summary) to FILE, '-' for stderr")
    ap.add_argument("-v", "--verbose", action="count", default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING - 10 * min(args.verbose, 2),
                        format="bumble_controllers: %(message)s", stream=sys.stderr)
    if not 1 <= args.count <= 64:
        ap.error("--count must be 1..64")
    return asyncio.run(async_main(args))


if __name__ == "__main__":
    sys.exit(main())
