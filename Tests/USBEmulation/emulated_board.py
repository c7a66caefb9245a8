#!/usr/bin/python3
"""Emulated Qorvo DWM3001CDK (nRF52833 native USB, CDC-ACM, FiRa UCI) for libusb programs.

Runs COMMAND inside a umockdev testbed that holds one emulated board on bus 001 and serves the
board's usbfs node (/dev/bus/usb/001/NNN) from Python, the way the Linux kernel's usbfs and the
board's nRF5-SDK-style firmware would answer. Bulk OUT bytes go to a TCP connection to a UWBS
(e.g. `nearby-bridge world`), bytes from that connection come back on bulk IN.

    /usr/bin/python3 emulated_board.py --uci HOST:PORT [--serial 0123456789AB] [--pid 0x520f]
        [--control PATH] [--node-mode 0664] [options] -- COMMAND [ARGS...]

    /usr/bin/python3 emulated_board.py ctl PATH COMMAND...     # send one control command

Exit status: COMMAND's (128+N if it died of signal N). See README.md in this directory.

Must run with the system Python (/usr/bin/python3): it needs python3-gi and gir1.2-umockdev-1.0.
"""

import argparse
import collections
import errno
import os
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import termios
import threading
import time
import traceback
import tty
import queue

try:
    import gi
    gi.require_version('UMockdev', '1.0')
    from gi.repository import UMockdev, GLib
except (ImportError, ValueError) as exc:  # pragma: no cover - environment problem
    sys.stderr.write('emulated_board: needs /usr/bin/python3 with python3-gi and gir1.2-umockdev-1.0 '
                     '(%s)\n' % exc)
    sys.exit(2)

# --------------------------------------------------------------------------------------------
# usbfs ABI (x86_64 values, checked against /usr/include/linux/usbdevice_fs.h)
# --------------------------------------------------------------------------------------------

USBDEVFS_CONTROL = 0xc0185500
USBDEVFS_BULK = 0xc0185502
USBDEVFS_RESETEP = 0x80045503
USBDEVFS_SETINTERFACE = 0x80085504
USBDEVFS_SETCONFIGURATION = 0x80045505
USBDEVFS_GETDRIVER = 0x41045508
USBDEVFS_SUBMITURB = 0x8038550a
USBDEVFS_DISCARDURB = 0x0000550b
USBDEVFS_REAPURB = 0x4008550c
USBDEVFS_REAPURBNDELAY = 0x4008550d
USBDEVFS_DISCSIGNAL = 0x8010550e
USBDEVFS_CLAIMINTERFACE = 0x8004550f
USBDEVFS_RELEASEINTERFACE = 0x80045510
USBDEVFS_CONNECTINFO = 0x40085511
USBDEVFS_IOCTL = 0xc0105512
USBDEVFS_HUB_PORTINFO = 0x80805513
USBDEVFS_RESET = 0x00005514
USBDEVFS_CLEAR_HALT = 0x80045515
USBDEVFS_DISCONNECT = 0x00005516
USBDEVFS_CONNECT = 0x00005517
USBDEVFS_CLAIM_PORT = 0x80045518
USBDEVFS_RELEASE_PORT = 0x80045519
USBDEVFS_GET_CAPABILITIES = 0x8004551a
USBDEVFS_DISCONNECT_CLAIM = 0x8108551b
USBDEVFS_ALLOC_STREAMS = 0x8008551c
USBDEVFS_FREE_STREAMS = 0x8008551d
USBDEVFS_DROP_PRIVILEGES = 0x4004551e
USBDEVFS_GET_SPEED = 0x0000551f
USBDEVFS_CONNINFO_EX_BASE = 0x80005520      # _IOC(_IOC_READ, 'U', 32, len): len in bits 16..29
USBDEVFS_FORBID_SUSPEND = 0x00005521
USBDEVFS_ALLOW_SUSPEND = 0x00005522
USBDEVFS_WAIT_FOR_RESUME = 0x00005523

IOCTL_NAMES = {v: k for k, v in globals().items() if k.startswith('USBDEVFS_')}

URB_TYPE_ISO, URB_TYPE_INTERRUPT, URB_TYPE_CONTROL, URB_TYPE_BULK = 0, 1, 2, 3
URB_TYPE_NAMES = {0: 'iso', 1: 'int', 2: 'ctrl', 3: 'bulk'}

CAP_ZERO_PACKET = 0x01
CAP_BULK_CONTINUATION = 0x02
CAP_NO_PACKET_SIZE_LIM = 0x04
CAP_BULK_SCATTER_GATHER = 0x08
CAP_REAP_AFTER_DISCONNECT = 0x10
CAP_MMAP = 0x20
CAP_DROP_PRIVILEGES = 0x40
CAP_CONNINFO_EX = 0x80
CAP_SUSPEND = 0x100
# What usbfs reports for a device behind an xHCI controller (sg_tablesize != 0, no_stop_on_short),
# minus MMAP: the emulated fd cannot be mmap()ed, so libusb_dev_mem_alloc() fails here.
USBFS_CAPS = (CAP_ZERO_PACKET | CAP_NO_PACKET_SIZE_LIM | CAP_BULK_SCATTER_GATHER |
              CAP_REAP_AFTER_DISCONNECT | CAP_DROP_PRIVILEGES | CAP_CONNINFO_EX | CAP_SUSPEND)

DISCONNECT_CLAIM_IF_DRIVER = 0x01
DISCONNECT_CLAIM_EXCEPT_DRIVER = 0x02

USB_SPEED_FULL = 2           # enum usb_device_speed, what USBDEVFS_GET_SPEED returns

# --------------------------------------------------------------------------------------------
# The board: descriptors
# --------------------------------------------------------------------------------------------

NORDIC_VID = 0x1915
MAX_PACKET = 64              # nRF52 USBD: full speed, 64-byte endpoints (NRF_DRV_USBD_EPSIZE)
EP_COMM_IN = 0x82            # CDC notification endpoint (interrupt IN), interface 0
EP_DATA_IN = 0x81            # bulk IN, interface 1
EP_DATA_OUT = 0x01           # bulk OUT, interface 1
IF_COMM, IF_DATA = 0, 1
ENDPOINTS = {                # address -> (interface, transfer type)
    EP_COMM_IN: (IF_COMM, URB_TYPE_INTERRUPT),
    EP_DATA_IN: (IF_DATA, URB_TYPE_BULK),
    EP_DATA_OUT: (IF_DATA, URB_TYPE_BULK),
}
INTERFACES = (IF_COMM, IF_DATA)

CDC_SET_LINE_CODING = 0x20
CDC_GET_LINE_CODING = 0x21
CDC_SET_CONTROL_LINE_STATE = 0x22

MANUFACTURER = 'Nordic Semiconductor'
PRODUCT = 'nRF52 USB Product'


def device_descriptor(vid, pid, bcd_device=0x0100, dev_class=(0, 0, 0), max_packet0=64,
                      strings=(1, 2, 3), bcd_usb=0x0200):
    return struct.pack('<BBHBBBBHHHBBBB', 18, 1, bcd_usb, dev_class[0], dev_class[1], dev_class[2],
                       max_packet0, vid, pid, bcd_device, strings[0], strings[1], strings[2], 1)


def board_config_descriptor():
    """Configuration 1 as the nRF5 SDK CDC-ACM class lays it out: an interface association,
    the communication interface with the CDC functional descriptors and its notification
    endpoint, then the data interface with bulk IN and bulk OUT."""
    body = b''.join([
        # interface association: first 0, count 2, class 02/02/01 (CDC ACM, AT V.250)
        struct.pack('<BBBBBBBB', 8, 0x0B, IF_COMM, 2, 0x02, 0x02, 0x01, 0),
        # interface 0: CDC communication, ACM, protocol AT V.250, 1 endpoint
        struct.pack('<BBBBBBBBB', 9, 4, IF_COMM, 0, 1, 0x02, 0x02, 0x01, 0),
        struct.pack('<BBBH', 5, 0x24, 0x00, 0x0110),             # header, CDC 1.10
        struct.pack('<BBBBB', 5, 0x24, 0x01, 0x03, IF_DATA),     # call management
        struct.pack('<BBBB', 4, 0x24, 0x02, 0x02),               # ACM: line coding + state
        struct.pack('<BBBBB', 5, 0x24, 0x06, IF_COMM, IF_DATA),  # union
        struct.pack('<BBBBHB', 7, 5, EP_COMM_IN, 0x03, MAX_PACKET, 0x10),
        # interface 1: CDC data, 2 endpoints
        struct.pack('<BBBBBBBBB', 9, 4, IF_DATA, 0, 2, 0x0A, 0x00, 0x00, 0),
        struct.pack('<BBBBHB', 7, 5, EP_DATA_IN, 0x02, MAX_PACKET, 0),
        struct.pack('<BBBBHB', 7, 5, EP_DATA_OUT, 0x02, MAX_PACKET, 0),
    ])
    # bmAttributes 0xC0 (self powered) and 100 mA: nRF5 SDK defaults, not read from a real board.
    return struct.pack('<BBHBBBBB', 9, 2, 9 + len(body), 2, 1, 0, 0xC0, 50) + body


def roothub_config_descriptor():
    body = (struct.pack('<BBBBBBBBB', 9, 4, 0, 0, 1, 0x09, 0, 0, 0) +
            struct.pack('<BBBBHB', 7, 5, 0x81, 0x03, 4, 12))
    return struct.pack('<BBHBBBBB', 9, 2, 9 + len(body), 1, 1, 0, 0xE0, 0) + body


def string_descriptor(text):
    raw = text.encode('utf-16-le')
    return bytes([2 + len(raw), 3]) + raw


# --------------------------------------------------------------------------------------------
# logging
# --------------------------------------------------------------------------------------------

T0 = time.monotonic()
LOG_LOCK = threading.Lock()
LOG_FILE = sys.stderr
VERBOSE = 0


def log(msg, level=0):
    if level > VERBOSE:
        return
    line = '[emulated_board %7.3f] %s\n' % (time.monotonic() - T0, msg)
    with LOG_LOCK:
        try:
            LOG_FILE.write(line)
            LOG_FILE.flush()
        except (OSError, ValueError):
            pass


def u32(b, off):
    return struct.unpack_from('<I', b, off)[0]


def i32(b, off):
    return struct.unpack_from('<i', b, off)[0]


def u64(b, off):
    return struct.unpack_from('<Q', b, off)[0]


class IoctlFailure(Exception):
    def __init__(self, err):
        Exception.__init__(self, errno.errorcode.get(err, str(err)))
        self.err = err


# --------------------------------------------------------------------------------------------
# URBs and usbfs file descriptors
# --------------------------------------------------------------------------------------------

class Urb:
    __slots__ = ('client', 'addr', 'type', 'ep', 'flags', 'length', 'out', 'setup', 'status',
                 'actual', 'data', 'seq', 'sync_io', 'sync_arg', 'timer')

    def __init__(self, client, addr, typ, ep, flags, length):
        self.client, self.addr, self.type, self.ep = client, addr, typ, ep
        self.flags, self.length = flags, length
        self.out = b''
        self.setup = None
        self.status = 0
        self.actual = 0
        self.data = b''
        self.seq = 0
        self.sync_io = None      # USBDEVFS_BULK: the blocked ioctl to finish on completion
        self.sync_arg = None
        self.timer = None

    def describe(self):
        return 'urb 0x%x %s ep 0x%02x len %d' % (self.addr, URB_TYPE_NAMES.get(self.type, '?'),
                                                 self.ep, self.length)


class Client:
    """One open file descriptor on the usbfs node (struct usb_dev_state in the kernel)."""
    counter = 0

    def __init__(self, io):
        Client.counter += 1
        self.id = Client.counter
        self.io = io
        self.claimed = set()
        self.completed = collections.deque()
        self.waiting_reap = None     # blocked USBDEVFS_REAPURB
        self.read_pos = 0
        self.gone = False

    def __repr__(self):
        return 'fd#%d' % self.id


# --------------------------------------------------------------------------------------------
# one plugged-in instance of the board (a replug makes a new one, with a new device number)
# --------------------------------------------------------------------------------------------

class Board:
    def __init__(self, fx, devnum):
        self.fx = fx
        self.lock = fx.lock
        self.devnum = devnum
        self.busnum = 1
        self.serial = fx.args.serial
        self.pid = fx.args.pid
        self.name = '%d-1' % self.busnum
        self.devnode = '/dev/bus/usb/%03d/%03d' % (self.busnum, devnum)
        self.device_desc = device_descriptor(NORDIC_VID, self.pid)
        self.config_desc = board_config_descriptor()
        self.strings = {1: MANUFACTURER, 2: PRODUCT, 3: self.serial}
        self.plugged = False
        self.clients = {}
        self.pending = []            # submitted, not yet completed URBs, in submission order
        self.seq = 0
        self.configured = True
        self.iface_owner = {IF_COMM: 'cdc_acm', IF_DATA: 'cdc_acm'}   # 'cdc_acm' | Client | None
        self.dtr = False
        self.rts = False
        self.line_coding = struct.pack('<IBBB', 9600, 0, 0, 8)   # what cdc_acm's probe sets
        self.in_chunks = collections.deque()   # firmware writes waiting for bulk IN URBs
        self.framer = bytearray()
        self.sock = None
        self.writer_q = None
        self.uwbs_state = 'none'
        self.gate_open = True
        self.master = self.slave = None
        self.pts = None
        self.helper = None
        self.handler = None
        self.sys_dev = None
        self.sys_ifaces = []
        self.stats = collections.Counter()

    # ---------------------------------------------------------------- plug / unplug

    def plug(self):
        fx = self.fx
        # The usbfs node is a pty slave: umockdev hands every ioctl to our handler, and the pty's
        # output flow control (TCOOFF/TCOON) decides whether poll() reports POLLOUT. So the fd
        # polls writable only while a completed URB waits to be reaped, as with the kernel, and
        # closing the master hangs the slave up: poll() then reports POLLERR|POLLHUP, which is
        # how libusb notices that an open device was unplugged.
        self.master, self.slave = os.openpty()
        self.pts = os.ttyname(self.slave)
        tty.setraw(self.slave)
        termios.tcflow(self.slave, termios.TCOOFF)
        self.gate_open = False
        self._start_ctty_holder()
        if os.geteuid() == 0:
            os.chown(self.pts, 0, 0)
        os.chmod(self.pts, fx.current_mode())

        # node and ioctl handler first: when the "add" uevent goes out, udev would already have
        # created the node, so a hotplug callback can open the device at once
        node = os.path.join(fx.root, self.devnode.lstrip('/'))
        os.makedirs(os.path.dirname(node), exist_ok=True)
        if os.path.lexists(node):
            os.unlink(node)
        os.symlink(self.pts, node)
        self.handler = UMockdev.IoctlBase()
        self.handler.connect('client-connected', self._on_client_connected)
        self.handler.connect_after('handle-ioctl', self._on_ioctl)
        self.handler.connect_after('handle-read', self._on_read)
        self.handler.connect_after('handle-write', self._on_write)
        fx.tb.attach_ioctl(self.devnode, self.handler)
        self.plugged = True
        if fx.uci_addr:
            # Power-on: connect to the UWBS now, so nothing the host sends is lost; if it is not
            # there yet, keep trying in the background and queue what the host sends.
            self.writer_q = queue.Queue()
            self.uwbs_state = 'connecting'
            sock = None
            try:
                sock = socket.create_connection(fx.uci_addr, timeout=2)
            except OSError as exc:
                log('UWBS %s:%d not reachable (%s); retrying in the background' %
                    (fx.uci_addr + (exc,)))
            threading.Thread(target=self._uwbs_thread, args=(sock,), daemon=True,
                             name='uwbs-%d' % self.devnum).start()

        # sysfs: the device, then its interfaces; each add_from_string() sends an "add" uevent
        # (this process runs under the umockdev preload, see main())
        devpath = fx.roothub_devpath + '/' + self.name
        minor = (self.busnum - 1) * 128 + self.devnum - 1
        product = '%x/%x/%x' % (NORDIC_VID, self.pid, 0x100)
        props = [('DEVNAME', self.devnode), ('DEVTYPE', 'usb_device'), ('DRIVER', 'usb'),
                 ('PRODUCT', product), ('TYPE', '0/0/0'),
                 ('BUSNUM', '%03d' % self.busnum), ('DEVNUM', '%03d' % self.devnum),
                 ('MAJOR', '189'), ('MINOR', str(minor))]
        attrs = {
            'idVendor': '%04x' % NORDIC_VID, 'idProduct': '%04x' % self.pid, 'bcdDevice': '0100',
            'manufacturer': MANUFACTURER, 'product': PRODUCT, 'serial': self.serial,
            'busnum': str(self.busnum), 'devnum': str(self.devnum), 'devpath': '1', 'speed': '12',
            'version': ' 2.00', 'bDeviceClass': '00', 'bDeviceSubClass': '00',
            'bDeviceProtocol': '00', 'bMaxPacketSize0': '64', 'bNumConfigurations': '1',
            'bConfigurationValue': '1', 'bNumInterfaces': ' 2', 'bmAttributes': 'c0',
            'bMaxPower': '100mA', 'maxchild': '0', 'removable': 'removable', 'authorized': '1',
            'avoid_reset_quirk': '0', 'quirks': '0x0', 'ltm_capable': 'no', 'urbnum': '12',
            'rx_lanes': '1', 'tx_lanes': '1', 'configuration': '', 'dev': '189:%d' % minor,
        }
        self.sys_dev = fx.add_sysfs(devpath, 'usb', attrs, props,
                                    {'descriptors': self.device_desc + self.config_desc})
        fx.set_driver_link(self.sys_dev, 'usb')
        modalias_base = 'usb:v%04Xp%04Xd0100dc00dsc00dp00' % (NORDIC_VID, self.pid)
        self.sys_ifaces = []
        for num, (cls, sub, proto, neps) in ((IF_COMM, (2, 2, 1, 1)), (IF_DATA, (10, 0, 0, 2))):
            iname = '%s:1.%d' % (self.name, num)
            modalias = modalias_base + 'ic%02Xisc%02Xip%02Xin%02X' % (cls, sub, proto, num)
            iattrs = {'bInterfaceNumber': '%02x' % num, 'bAlternateSetting': ' 0',
                      'bNumEndpoints': '%02x' % neps, 'bInterfaceClass': '%02x' % cls,
                      'bInterfaceSubClass': '%02x' % sub, 'bInterfaceProtocol': '%02x' % proto,
                      'supports_autosuspend': '1', 'authorized': '1'}
            path = fx.add_sysfs(devpath + '/' + iname, 'usb', iattrs, [
                ('DEVTYPE', 'usb_interface'), ('DRIVER', 'cdc_acm'), ('PRODUCT', product),
                ('TYPE', '0/0/0'), ('INTERFACE', '%d/%d/%d' % (cls, sub, proto)),
                ('MODALIAS', modalias)])
            self.sys_ifaces.append((num, path, cls, sub, proto, modalias))
        self._sync_interface_sysfs()
        log('plugged: %s serial %s pid 0x%04x (%s, sysfs %s)' % (self.devnode, self.serial,
                                                                   self.pid, self.pts, self.name))

    def _start_ctty_holder(self):
        # If the process under test were a session leader without a controlling terminal,
        # opening the pty (libusb opens without O_NOCTTY) would make it its controlling tty and
        # the hangup on unplug would SIGHUP it. A helper session owns the pty instead.
        try:
            self.helper = subprocess.Popen(
                ['/bin/sh', '-c', 'exec sleep 2147483647 <>"$0"', self.pts],
                start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, close_fds=True)
        except OSError as exc:
            log('warning: cannot start the pty session holder: %s' % exc)
            self.helper = None

    def unplug(self, quiet=False):
        """The board disappears: URBs fail as in usb_disconnect(), the fd hangs up, sysfs and the
        node go away, the UWBS connection closes."""
        fx = self.fx
        with self.lock:
            if not self.plugged:
                return
            self.plugged = False
            failed = len(self.pending)
            for urb in list(self.pending):
                self._complete(urb, -errno.ESHUTDOWN, 0)
            for client in list(self.clients.values()):
                if client.waiting_reap is not None and not client.completed:
                    io, client.waiting_reap = client.waiting_reap, None
                    io.complete(-1, errno.ENODEV)
            self._close_uwbs()
            try:
                os.close(self.master)       # hangs up the slave: POLLERR|POLLHUP on open fds
            except OSError:
                pass
            try:
                os.close(self.slave)
            except OSError:
                pass
            self.master = self.slave = None
            if not quiet:
                tb = fx.tb
                for _num, path, *_rest in reversed(self.sys_ifaces):
                    tb.uevent(path, 'remove')
                tb.uevent(self.sys_dev, 'remove')
                for _num, path, *_rest in reversed(self.sys_ifaces):
                    tb.remove_device(path)
                tb.remove_device(self.sys_dev)
                node = os.path.join(fx.root, self.devnode.lstrip('/'))
                if os.path.lexists(node):
                    os.unlink(node)
                try:
                    tb.detach_ioctl(self.devnode)
                except GLib.Error as exc:
                    log('detach_ioctl: %s' % exc.message, 1)
        if self.helper is not None:
            try:
                self.helper.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.helper.kill()
                self.helper.wait()
            self.helper = None
        if not quiet:
            log('unplugged: %s (%d pending URB(s) failed with -ESHUTDOWN, %d fd(s) still open)' %
                (self.devnode, failed, sum(1 for c in self.clients.values() if not c.gone)))

    # ---------------------------------------------------------------- UWBS side (TCP)

    def _uwbs_thread(self, sock):
        host, port = self.fx.uci_addr
        while sock is None:
            time.sleep(0.25)
            with self.lock:
                if not self.plugged:
                    return
            try:
                sock = socket.create_connection((host, port), timeout=2)
            except OSError:
                continue
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.lock:
            if not self.plugged or self.writer_q is None:
                sock.close()
                return
            self.sock, self.uwbs_state = sock, 'connected'
            wq = self.writer_q
        log('UWBS connected: %s:%d (local port %d)' % (host, port, sock.getsockname()[1]))
        threading.Thread(target=self._uwbs_writer, args=(sock, wq), daemon=True,
                         name='uwbs-w-%d' % self.devnum).start()
        while True:
            try:
                data = sock.recv(65536)
            except OSError:
                data = b''
            with self.lock:
                if self.sock is not sock:
                    return
                if not data:
                    self.uwbs_state = 'closed by UWBS'
                    log('UWBS closed the connection; the board stays silent until replugged')
                    self.sock = None
                    if self.writer_q is not None:
                        self.writer_q.put(None)
                        self.writer_q = None
                    try:
                        sock.close()
                    except OSError:
                        pass
                    return
                self.stats['uwbs_rx'] += len(data)
                self._feed_from_uwbs(data)

    @staticmethod
    def _uwbs_writer(sock, wq):
        while True:
            data = wq.get()
            if data is None:
                return
            try:
                sock.sendall(data)
            except OSError:
                return

    def _close_uwbs(self):
        sock, self.sock = self.sock, None
        if self.writer_q is not None:
            self.writer_q.put(None)
            self.writer_q = None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        self.uwbs_state = 'closed'

    def _feed_from_uwbs(self, data):
        """Cut the UWBS byte stream into the firmware's writes: one UCI packet per USB transfer
        (the firmware writes each packet with one app_usbd_cdc_acm_write, which ends with a
        short packet or a ZLP), unless --in-framing stream."""
        if self.fx.args.in_framing == 'stream':
            self._queue_in(bytes(data))
            return
        self.framer += data
        while len(self.framer) >= 4:
            mt = self.framer[0] >> 5
            if mt in (0, 4, 5):
                length = 4 + (self.framer[2] | self.framer[3] << 8)
            elif mt in (1, 2, 3):
                length = 4 + self.framer[3]
            else:   # not UCI: pass everything through as it came
                length = len(self.framer)
            if len(self.framer) < length:
                break
            chunk = bytes(self.framer[:length])
            del self.framer[:length]
            self._queue_in(chunk)

    def _queue_in(self, chunk):
        if not self.dtr and self.fx.args.pre_dtr == 'drop':
            self.stats['dropped_pre_dtr'] += len(chunk)
            log('DTR off: dropped %d byte(s) from the UWBS' % len(chunk), 1)
            return
        self.in_chunks.append(chunk)
        self._pump()

    def inject(self, data):
        """Bytes written by the firmware between UCI packets (garbage on the line)."""
        with self.lock:
            if not self.plugged:
                raise ValueError('not plugged')
            self._queue_in(bytes(data))

    # ---------------------------------------------------------------- data movement

    def _pump(self):
        """Move data while the CDC port is open (DTR set): OUT URBs are accepted and forwarded
        to the UWBS, queued firmware writes complete IN URBs. Before DTR the nRF5 CDC class
        neither reads nor writes, so OUT URBs stay pending (NAK) and IN data waits."""
        if not self.plugged or not self.dtr:
            return
        for urb in [u for u in self.pending if u.ep == EP_DATA_OUT]:
            if self.writer_q is not None:
                self.writer_q.put(urb.out)
                self.stats['uwbs_tx'] += len(urb.out)
            else:
                self.stats['out_discarded'] += len(urb.out)
            self._complete(urb, 0, urb.length)
        while self.in_chunks:
            urb = next((u for u in self.pending if u.ep == EP_DATA_IN), None)
            if urb is None:
                break
            chunk = self.in_chunks[0]
            status = 0
            if len(chunk) <= urb.length:
                take = consumed = len(chunk)
            elif urb.length % MAX_PACKET == 0:
                take = consumed = urb.length           # the rest goes to the next URB
            else:
                # The buffer ends inside a max-size packet: the host controller reports babble.
                take = urb.length
                consumed = min(len(chunk), (urb.length // MAX_PACKET + 1) * MAX_PACKET)
                status = -errno.EOVERFLOW
                log('warning: %s is not a multiple of %d and the device sent more: -EOVERFLOW, '
                    '%d byte(s) lost' % (urb.describe(), MAX_PACKET, consumed - take))
            if consumed == len(chunk):
                self.in_chunks.popleft()
            else:
                self.in_chunks[0] = chunk[consumed:]
            self.stats['in_bytes'] += take
            self._complete(urb, status, take, chunk[:take])

    def _complete(self, urb, status, actual, data=b''):
        try:
            self.pending.remove(urb)
        except ValueError:
            return
        urb.status, urb.actual, urb.data = status, actual, data
        if urb.timer is not None:
            urb.timer.cancel()
        log('%s %s: complete status %d actual %d' % (urb.client, urb.describe(), status, actual), 2)
        if urb.sync_io is not None:
            self._finish_sync(urb)
            return
        client = urb.client
        if client.gone:
            return
        client.completed.append(urb)
        if client.waiting_reap is not None:
            io, client.waiting_reap = client.waiting_reap, None
            self._reap_into(client, io)
        self._update_gate()

    def _update_gate(self):
        want = any(c.completed for io, c in self.clients.items() if io.get_connected())
        if want == self.gate_open or self.slave is None:
            return
        try:
            termios.tcflow(self.slave, termios.TCOON if want else termios.TCOOFF)
            self.gate_open = want
        except termios.error as exc:
            log('tcflow: %s' % exc, 1)

    # ---------------------------------------------------------------- interfaces

    def _sync_interface_sysfs(self):
        if not self.sys_ifaces or not self.plugged:
            return
        for num, path, cls, sub, proto, modalias in self.sys_ifaces:
            owner = self.iface_owner.get(num)
            drv = None if owner is None else ('cdc_acm' if owner == 'cdc_acm' else 'usbfs')
            self.fx.set_driver_link(path, drv)
            props = ['DEVTYPE=usb_interface']
            if drv:
                props.append('DRIVER=' + drv)
            props += ['PRODUCT=%x/%x/%x' % (NORDIC_VID, self.pid, 0x100), 'TYPE=0/0/0',
                      'INTERFACE=%d/%d/%d' % (cls, sub, proto), 'MODALIAS=' + modalias]
            self.fx.write_attr(path, 'uevent', '\n'.join(props) + '\n')

    def _owner_name(self, num):
        owner = self.iface_owner.get(num)
        if owner is None:
            return None
        return 'cdc_acm' if owner == 'cdc_acm' else 'usbfs'

    def _claimintf(self, client, num):
        if num >= 32:
            raise IoctlFailure(errno.EINVAL)
        if not self.configured or num not in INTERFACES:
            raise IoctlFailure(errno.ENOENT)
        owner = self.iface_owner[num]
        if owner is client:
            return
        if isinstance(owner, Client) and not owner.io.get_connected():
            self.purge_closed()
            owner = self.iface_owner[num]
        if owner is not None:
            raise IoctlFailure(errno.EBUSY)
        self.iface_owner[num] = client
        client.claimed.add(num)
        self._sync_interface_sysfs()
        log('%s claimed interface %d' % (client, num), 1)

    def _checkintf(self, client, num):
        if not self.configured:
            raise IoctlFailure(errno.EHOSTUNREACH)
        if num >= 32:
            raise IoctlFailure(errno.EINVAL)
        if num in client.claimed:
            return
        log('usbfs: %s did not claim interface %d before use' % (client, num))
        self._claimintf(client, num)

    def _release_claim(self, client, num, status=-errno.ESHUTDOWN):
        """usbfs driver unbinding from an interface: its URBs end, the claim goes."""
        client.claimed.discard(num)
        if self.iface_owner.get(num) is client:
            self.iface_owner[num] = None
        for urb in [u for u in self.pending
                    if u.client is client and u.ep in ENDPOINTS and ENDPOINTS[u.ep][0] == num]:
            self._complete(urb, status, 0)
        self._sync_interface_sysfs()

    def _unbind_cdc_acm(self):
        # acm_disconnect() releases the other interface of the pair too.
        for num in INTERFACES:
            if self.iface_owner[num] == 'cdc_acm':
                self.iface_owner[num] = None
        self._sync_interface_sysfs()
        log('cdc_acm unbound from interfaces 0 and 1')

    # ---------------------------------------------------------------- ioctl entry points

    def _on_client_connected(self, _handler, io):
        with self.lock:
            self._client(io)

    def _client(self, io):
        client = self.clients.get(io)
        if client is None:
            client = Client(io)
            self.clients[io] = client
            io.connect('notify::connected', self._on_client_notify)
            log('%s opened %s' % (client, self.devnode), 1)
        return client

    def _on_client_notify(self, io, _pspec):
        if not io.get_connected():
            with self.lock:
                self.purge_closed()

    def purge_closed(self):
        """Forget fds the client closed, as usbdev_release() does: claims are released, URBs
        end. umockdev 0.17 does not signal a close (its "connected" property changes without
        a notify), so this runs before ioctls, on claim conflicts and from a periodic sweep."""
        for io, client in list(self.clients.items()):
            if io.get_connected():
                continue
            del self.clients[io]
            client.gone = True
            for num in list(client.claimed):
                self._release_claim(client, num)
            for urb in [u for u in self.pending if u.client is client]:
                self._complete(urb, -errno.ENOENT, 0)
            client.completed.clear()
            log('%s closed %s' % (client, self.devnode), 1)
        self._update_gate()
        self.fx.forget_board_if_idle(self)

    def _on_read(self, _handler, io):
        # read() on usbfs returns the cached descriptors (libusb only reads them when sysfs is
        # missing or for libusb_wrap_sys_device()).
        with self.lock:
            client = self._client(io)
            if not self.plugged:
                io.complete(-1, errno.ENODEV)
                return True
            arg = io.get_arg()
            want = len(arg.retrieve())
            blob = self.device_desc + self.config_desc
            data = blob[client.read_pos:client.read_pos + want]
            client.read_pos += len(data)
            if data:
                arg.update(0, data)
            io.complete(len(data), 0)
        return True

    def _on_write(self, _handler, io):
        io.complete(-1, errno.EINVAL)
        return True

    def _on_ioctl(self, _handler, io):
        req = io.get_request()
        done = [False]
        client = None

        def finish(ret=0, err=0):
            done[0] = True
            io.complete(ret, err)

        try:
            with self.lock:
                self.purge_closed()
                client = self._client(io)
                self.stats['ioctls'] += 1
                name = IOCTL_NAMES.get(req, '0x%08x' % req)
                log('%s ioctl %s' % (client, name), 3)
                result = self._dispatch(client, io, req, finish)
                if result is not None and not done[0]:
                    finish(result, 0)
        except IoctlFailure as exc:
            log('%s ioctl %s -> %s' % (client, IOCTL_NAMES.get(req, '0x%08x' % req), exc), 2)
            if not done[0]:
                finish(-1, exc.err)
        except Exception:   # a bug here must not kill the worker thread
            log('internal error in ioctl 0x%08x:\n%s' % (req, traceback.format_exc()))
            if not done[0]:
                finish(-1, errno.EIO)
        return True

    def _dispatch(self, client, io, req, finish):
        """Returns the ioctl result (then it is completed with errno 0), or None if the
        handler completed (or deferred) it itself. Raises IoctlFailure(errno)."""
        arg = io.get_arg()
        if req in (USBDEVFS_REAPURBNDELAY, USBDEVFS_REAPURB):
            # reaping is allowed after a disconnect (USBDEVFS_CAP_REAP_AFTER_DISCONNECT)
            if client.completed:
                self._reap_into(client, io)
                return None
            if not self.plugged:
                raise IoctlFailure(errno.ENODEV)
            if req == USBDEVFS_REAPURB:
                client.waiting_reap = io
                return None
            raise IoctlFailure(errno.EAGAIN)
        if not self.plugged:
            raise IoctlFailure(errno.ENODEV)

        if req == USBDEVFS_SUBMITURB:
            self._submit(client, io, arg)
            return 0
        if req == USBDEVFS_DISCARDURB:
            addr = u64(bytes(arg.retrieve()), 0)
            urb = next((u for u in self.pending if u.client is client and u.addr == addr
                        and u.sync_io is None), None)
            if urb is None:
                raise IoctlFailure(errno.EINVAL)
            log('%s discard %s' % (client, urb.describe()), 2)
            self._complete(urb, -errno.ENOENT, 0)
            return 0
        if req == USBDEVFS_GET_CAPABILITIES:
            self._resolve(arg, 4).update(0, struct.pack('<I', USBFS_CAPS))
            return 0
        if req == USBDEVFS_GET_SPEED:
            return USB_SPEED_FULL
        if req == USBDEVFS_CONNECTINFO:
            self._resolve(arg, 8).update(0, struct.pack('<IB', self.devnum, 0))
            return 0
        if req & 0xC000FFFF == USBDEVFS_CONNINFO_EX_BASE:
            size = (req >> 16) & 0x3FFF
            info = struct.pack('<IIIIB7s', 24, self.busnum, self.devnum, USB_SPEED_FULL, 1,
                               bytes([1, 0, 0, 0, 0, 0, 0]))
            if size:
                self._resolve(arg, size).update(0, info[:size])
            return 0
        if req == USBDEVFS_GETDRIVER:
            d = self._resolve(arg, 260)
            num = u32(bytes(d.retrieve()), 0)
            drv = self._owner_name(num) if self.configured else None
            if drv is None:
                raise IoctlFailure(errno.ENODATA)
            d.update(4, drv.encode() + b'\0')
            return 0
        if req == USBDEVFS_IOCTL:
            return self._usbfs_ioctl(client, arg)
        if req == USBDEVFS_CLAIMINTERFACE:
            num = u32(bytes(self._resolve(arg, 4).retrieve()), 0)
            return self._claim_or_defer(client, io, num, lambda: self._claimintf(client, num))
        if req == USBDEVFS_RELEASEINTERFACE:
            num = u32(bytes(self._resolve(arg, 4).retrieve()), 0)
            if num >= 32:
                raise IoctlFailure(errno.EINVAL)
            if num not in INTERFACES:
                raise IoctlFailure(errno.ENOENT)
            if num not in client.claimed:
                raise IoctlFailure(errno.EINVAL)
            self._release_claim(client, num)
            log('%s released interface %d' % (client, num), 1)
            return 0
        if req == USBDEVFS_DISCONNECT_CLAIM:
            d = bytes(self._resolve(arg, 264).retrieve())
            num, flags = u32(d, 0), u32(d, 4)
            want = d[8:].split(b'\0', 1)[0].decode('latin-1')
            if num not in INTERFACES:
                raise IoctlFailure(errno.EINVAL)

            def disconnect_claim():
                drv = self._owner_name(num)
                if drv is not None:
                    if flags & DISCONNECT_CLAIM_IF_DRIVER and want != drv:
                        raise IoctlFailure(errno.EBUSY)
                    if flags & DISCONNECT_CLAIM_EXCEPT_DRIVER and want == drv:
                        raise IoctlFailure(errno.EBUSY)
                    self._disconnect_driver(num)
                self._claimintf(client, num)
            return self._claim_or_defer(client, io, num, disconnect_claim)
        if req == USBDEVFS_SETINTERFACE:
            d = bytes(self._resolve(arg, 8).retrieve())
            num, alt = u32(d, 0), u32(d, 4)
            self._checkintf(client, num)
            if num not in INTERFACES:
                raise IoctlFailure(errno.EINVAL)
            if alt != 0:
                raise IoctlFailure(errno.EINVAL)
            for urb in [u for u in self.pending
                        if u.ep in ENDPOINTS and ENDPOINTS[u.ep][0] == num]:
                self._complete(urb, -errno.ESHUTDOWN, 0)    # usb_disable_interface()
            return 0
        if req == USBDEVFS_SETCONFIGURATION:
            value = i32(bytes(self._resolve(arg, 4).retrieve()), 0)
            if self.configured and any(o is not None for o in self.iface_owner.values()):
                log('%s: SETCONFIGURATION %d refused, interfaces are claimed' % (client, value))
                raise IoctlFailure(errno.EBUSY)
            if value == 1:
                if not self.configured:
                    self.configured = True
                    self.iface_owner = {IF_COMM: 'cdc_acm', IF_DATA: 'cdc_acm'}
                    self.fx.write_attr(self.sys_dev, 'bConfigurationValue', '1\n')
                    self._sync_interface_sysfs()
                return 0
            if value in (0, -1):
                self.configured = False
                self.iface_owner = {IF_COMM: None, IF_DATA: None}
                self.fx.write_attr(self.sys_dev, 'bConfigurationValue', '')
                return 0
            raise IoctlFailure(errno.EINVAL)
        if req in (USBDEVFS_CLEAR_HALT, USBDEVFS_RESETEP):
            ep = u32(bytes(self._resolve(arg, 4).retrieve()), 0)
            if ep not in ENDPOINTS or not self.configured:
                raise IoctlFailure(errno.ENOENT)
            self._checkintf(client, ENDPOINTS[ep][0])
            return 0
        if req == USBDEVFS_RESET:
            log('%s: USB reset' % client)
            for c in list(self.clients.values()):
                for num in list(c.claimed):
                    self._release_claim(c, num)
            for urb in list(self.pending):
                self._complete(urb, -errno.ESHUTDOWN, 0)
            self.dtr = self.rts = False
            return 0
        if req == USBDEVFS_CONTROL:
            return self._sync_control(client, arg)
        if req == USBDEVFS_BULK:
            self._sync_bulk(client, io, arg, finish)
            return None
        if req in (USBDEVFS_DISCSIGNAL, USBDEVFS_DROP_PRIVILEGES, USBDEVFS_FORBID_SUSPEND,
                   USBDEVFS_ALLOW_SUSPEND, USBDEVFS_WAIT_FOR_RESUME):
            if req == USBDEVFS_DISCSIGNAL:
                log('%s: USBDEVFS_DISCSIGNAL accepted, but no signal is sent on unplug' % client)
            return 0
        if req in (USBDEVFS_ALLOC_STREAMS, USBDEVFS_FREE_STREAMS, USBDEVFS_CLAIM_PORT,
                   USBDEVFS_RELEASE_PORT):
            raise IoctlFailure(errno.EINVAL)
        log('%s: unknown ioctl 0x%08x (%s) on %s -> ENOTTY' %
            (client, req, IOCTL_NAMES.get(req, 'not usbfs'), self.devnode))
        raise IoctlFailure(errno.ENOTTY)

    def _claim_or_defer(self, client, io, num, attempt):
        """A claim that collides with another fd's claim waits up to 0.2 s before EBUSY: the
        kernel releases a closed fd's claims inside close(), but umockdev learns about the
        close asynchronously, so a quick close-then-reopen would otherwise see EBUSY."""
        try:
            attempt()
            return 0
        except IoctlFailure as exc:
            owner = self.iface_owner.get(num)
            if exc.err != errno.EBUSY or not isinstance(owner, Client) or owner is client:
                raise

        def retry():
            deadline = time.monotonic() + 0.2
            while True:
                time.sleep(0.01)
                with self.lock:
                    self.purge_closed()
                    try:
                        attempt()
                    except IoctlFailure as exc:
                        if exc.err == errno.EBUSY and time.monotonic() < deadline and \
                                isinstance(self.iface_owner.get(num), Client):
                            continue
                        io.complete(-1, exc.err)
                        return
                    io.complete(0, 0)
                    return
        threading.Thread(target=retry, daemon=True).start()
        return None

    @staticmethod
    def _resolve(arg, size):
        try:
            d = arg.resolve(0, size)
        except GLib.Error:
            d = None
        if d is None:
            raise IoctlFailure(errno.EFAULT)
        return d

    def _disconnect_driver(self, num):
        owner = self.iface_owner.get(num)
        if owner == 'cdc_acm':
            self._unbind_cdc_acm()
        elif owner is not None:
            log('usbfs claim of interface %d by %s broken by a disconnect' % (num, owner))
            self._release_claim(owner, num)

    def _usbfs_ioctl(self, client, arg):
        d = bytes(self._resolve(arg, 16).retrieve())
        ifno, code = i32(d, 0), u32(d, 4)
        if not self.configured:
            raise IoctlFailure(errno.EHOSTUNREACH)
        if ifno not in INTERFACES:
            raise IoctlFailure(errno.EINVAL)
        owner = self.iface_owner[ifno]
        if code == USBDEVFS_DISCONNECT:
            if owner is None:
                raise IoctlFailure(errno.ENODATA)
            self._disconnect_driver(ifno)
            return 0
        if code == USBDEVFS_CONNECT:
            if owner is not None:
                raise IoctlFailure(errno.EBUSY)
            # cdc_acm probes on the communication interface and needs the data interface free
            if ifno == IF_COMM and self.iface_owner[IF_DATA] is None:
                self.iface_owner = {IF_COMM: 'cdc_acm', IF_DATA: 'cdc_acm'}
                self._sync_interface_sysfs()
                self.dtr = False
                log('cdc_acm bound again to interfaces 0 and 1')
                return 1
            return 0
        if owner is None or owner != 'cdc_acm':
            raise IoctlFailure(errno.ENOTTY)
        raise IoctlFailure(errno.ENOTTY)

    # ---------------------------------------------------------------- URBs

    def _submit(self, client, io, arg):
        addr = u64(bytes(arg.retrieve()), 0)
        d = self._resolve(arg, 56)
        raw = bytes(d.retrieve())
        typ, ep, flags, length = raw[0], raw[1], u32(raw, 8), i32(raw, 24)
        if length < 0:
            raise IoctlFailure(errno.EINVAL)
        if ep & 0x7F == 0:
            if typ != URB_TYPE_CONTROL:
                raise IoctlFailure(errno.EINVAL)
            if length < 8:
                raise IoctlFailure(errno.EINVAL)
            buf = bytes(self._resolve_buffer(d, length).retrieve())
            setup = buf[:8]
            w_length = struct.unpack_from('<H', setup, 6)[0]
            if w_length + 8 > length:
                raise IoctlFailure(errno.EINVAL)
            self._check_ctrlrecip(client, setup)
            urb = Urb(client, addr, typ, ep, flags, length)
            urb.setup = setup
            urb.out = buf[8:8 + w_length] if not setup[0] & 0x80 else b''
            self._enqueue(urb)
            log('%s submit %s setup %s' % (client, urb.describe(), setup.hex()), 2)
            ok, data = self._control_request(client, setup, urb.out)
            if not ok:
                self._complete(urb, -errno.EPIPE, 0)
            elif setup[0] & 0x80:
                self._complete(urb, 0, len(data), data)
            else:
                self._complete(urb, 0, w_length)
            return
        if not self.configured or ep not in ENDPOINTS:
            raise IoctlFailure(errno.ENOENT)
        num, kind = ENDPOINTS[ep]
        if typ == URB_TYPE_BULK and kind == URB_TYPE_INTERRUPT:
            typ = URB_TYPE_INTERRUPT      # usbfs allows single-shot interrupt transfers as bulk
        elif typ != kind:
            raise IoctlFailure(errno.EINVAL)
        self._checkintf(client, num)
        urb = Urb(client, addr, typ, ep, flags, length)
        if not ep & 0x80 and length:
            urb.out = bytes(self._resolve_buffer(d, length).retrieve())
        self._enqueue(urb)
        log('%s submit %s' % (client, urb.describe()), 2)
        self._pump()

    def _enqueue(self, urb):
        self.seq += 1
        urb.seq = self.seq
        self.pending.append(urb)
        self.stats['urbs'] += 1

    @staticmethod
    def _resolve_buffer(d, length):
        try:
            b = d.resolve(16, length)
        except GLib.Error:
            b = None
        if b is None:
            raise IoctlFailure(errno.EFAULT)
        return b

    def _reap_into(self, client, io):
        urb = client.completed.popleft()
        try:
            p = self._resolve(io.get_arg(), 8)
            p.update(0, struct.pack('<Q', urb.addr))
            u = p.resolve(0, 56)
            u.update(4, struct.pack('<i', urb.status))
            u.update(28, struct.pack('<i', urb.actual))
            if urb.data:
                off = 8 if urb.type == URB_TYPE_CONTROL else 0
                b = u.resolve(16, off + len(urb.data))
                b.update(off, urb.data)
            log('%s reap %s status %d actual %d%s' % (
                client, urb.describe(), urb.status, urb.actual,
                (' data ' + urb.data[:48].hex()) if urb.data else ''), 2)
            io.complete(0, 0)
        except Exception:
            log('internal error while reaping:\n%s' % traceback.format_exc())
            io.complete(-1, errno.EFAULT)
        self._update_gate()

    def _check_ctrlrecip(self, client, setup):
        rtype, windex = setup[0], struct.unpack_from('<H', setup, 4)[0]
        if rtype & 0x60 == 0x40:          # vendor requests go straight through
            return
        index = windex & 0xFF
        recip = rtype & 0x1F
        if recip == 1:                    # interface
            self._checkintf(client, index)
        elif recip == 2 and index & 0x7F:  # endpoint
            ep = index if index in ENDPOINTS else index ^ 0x80
            if ep in ENDPOINTS:
                self._checkintf(client, ENDPOINTS[ep][0])

    def _control_request(self, client, setup, out):
        """The firmware's ep0 handling. Returns (ok, data); ok False = STALL (-EPIPE)."""
        rtype, req, value, index, w_length = struct.unpack('<BBHHH', setup)
        kind = rtype & 0x60
        recip = rtype & 0x1F
        data = None
        if kind == 0x00:                                        # standard
            if req == 6 and rtype == 0x80:                      # GET_DESCRIPTOR
                dtype, didx = value >> 8, value & 0xFF
                if dtype == 1:
                    data = self.device_desc
                elif dtype == 2 and didx == 0:
                    data = self.config_desc
                elif dtype == 3:
                    if didx == 0:
                        data = bytes([4, 3, 0x09, 0x04])
                    elif didx in self.strings:
                        data = string_descriptor(self.strings[didx])
            elif req == 0 and rtype & 0x80:                     # GET_STATUS
                data = b'\x01\x00' if recip == 0 else b'\x00\x00'
            elif req == 8 and rtype == 0x80:                    # GET_CONFIGURATION
                data = bytes([1 if self.configured else 0])
            elif req == 10 and rtype == 0x81:                   # GET_INTERFACE
                data = b'\x00'
            elif req in (1, 3, 9, 11) and not rtype & 0x80:     # CLEAR/SET_FEATURE, SET_CONFIG/IF
                data = b''
        elif kind == 0x20 and recip == 1 and index & 0xFF in INTERFACES:   # CDC class
            if req == CDC_SET_LINE_CODING and rtype == 0x21 and len(out) >= 7:
                self.line_coding = bytes(out[:7])
                baud, stop, parity, bits = struct.unpack('<IBBB', self.line_coding)
                log('SET_LINE_CODING %d baud, %d data bits, parity %d, stop %d' %
                    (baud, bits, parity, stop), 1)
                data = b''
            elif req == CDC_GET_LINE_CODING and rtype == 0xA1:
                data = self.line_coding
            elif req == CDC_SET_CONTROL_LINE_STATE and rtype == 0x21:
                self._set_line_state(value)
                data = b''
        if data is None:
            log('%s: ep0 request %s stalled' % (client, setup.hex()), 1)
            return False, b''
        return True, data[:w_length]

    def _set_line_state(self, value):
        dtr, self.rts = bool(value & 1), bool(value & 2)
        if dtr != self.dtr:
            self.dtr = dtr
            log('SET_CONTROL_LINE_STATE DTR %s (port %s)' % ('on' if dtr else 'off',
                                                              'open' if dtr else 'closed'))
            self._pump()

    def _sync_control(self, client, arg):
        d = self._resolve(arg, 24)
        raw = bytes(d.retrieve())
        setup = raw[:8]
        w_length = struct.unpack_from('<H', setup, 6)[0]
        self._check_ctrlrecip(client, setup)
        out = b''
        if w_length and not setup[0] & 0x80:
            out = bytes(self._resolve_buffer(d, w_length).retrieve())
        ok, data = self._control_request(client, setup, out)
        if not ok:
            raise IoctlFailure(errno.EPIPE)
        if setup[0] & 0x80:
            if data:
                self._resolve_buffer(d, len(data)).update(0, data)
            return len(data)
        return w_length

    def _sync_bulk(self, client, io, arg, finish):
        d = self._resolve(arg, 24)
        raw = bytes(d.retrieve())
        ep, length, timeout = u32(raw, 0) & 0xFF, u32(raw, 4), u32(raw, 8)
        if not self.configured or ep not in ENDPOINTS:
            raise IoctlFailure(errno.ENOENT)
        self._checkintf(client, ENDPOINTS[ep][0])
        urb = Urb(client, 0, ENDPOINTS[ep][1], ep, 0, length)
        if not ep & 0x80 and length:
            urb.out = bytes(self._resolve_buffer(d, length).retrieve())
        urb.sync_io, urb.sync_arg = io, d
        self._enqueue(urb)
        if timeout:
            urb.timer = threading.Timer(timeout / 1000.0, self._sync_timeout, args=(urb,))
            urb.timer.daemon = True
            urb.timer.start()
        self._pump()

    def _sync_timeout(self, urb):
        with self.lock:
            if urb in self.pending:
                self._complete(urb, -errno.ETIMEDOUT, 0)

    def _finish_sync(self, urb):
        io = urb.sync_io
        urb.sync_io = None
        if urb.status == 0:
            if urb.data:
                try:
                    self._resolve_buffer(urb.sync_arg, len(urb.data)).update(0, urb.data)
                except IoctlFailure:
                    io.complete(-1, errno.EFAULT)
                    return
            io.complete(urb.actual, 0)
        elif urb.status == -errno.ESHUTDOWN:
            io.complete(-1, errno.ENODEV)
        else:
            io.complete(-1, -urb.status)

    def status(self):
        st = self.stats
        return ('plugged=%d devnum=%d node=%s dtr=%d uwbs=%s clients=%d pending_urbs=%d '
                'in_queued=%d drivers=%s,%s urbs=%d to_uwbs=%d from_uwbs=%d bulk_in=%d '
                'out_discarded=%d' % (
                    self.plugged, self.devnum, self.devnode, self.dtr,
                    self.uwbs_state.replace(' ', '_'), sum(1 for c in self.clients.values()
                                                           if not c.gone),
                    len(self.pending), sum(len(c) for c in self.in_chunks),
                    self._owner_name(0) or '-', self._owner_name(1) or '-', st['urbs'],
                    st['uwbs_tx'], st['uwbs_rx'], st['in_bytes'],
                    st['out_discarded'] + st['dropped_pre_dtr']))


# --------------------------------------------------------------------------------------------
# the fixture: testbed, root hub, control channel, COMMAND
# --------------------------------------------------------------------------------------------

class Fixture:
    def __init__(self, args):
        self.args = args
        self.lock = threading.RLock()
        self.uci_addr = parse_uci(args.uci)
        self.denied = False
        self.board = None
        self.old_boards = []
        self.next_devnum = args.devnum
        self.control_server = None
        self.child = None
        self.caps_dropped = False
        self.closing = False
        self.tb = UMockdev.Testbed.new()
        self.root = self.tb.get_root_dir()
        self._build_static_tree()

    # ------------------------------------------------------------- sysfs helpers

    def add_sysfs(self, devpath, subsystem, attrs, props, binattrs=None):
        """Adds /sys<devpath> (devpath starts with /devices/) through umockdev's record format,
        which, unlike add_device() from a process outside the testbed, does not look for the
        parent in the real /sys. Text attributes get the kernel's trailing newline."""
        def esc(value):
            return value.replace('\\', '\\\\').replace('\n', '\\n')
        lines = ['P: ' + devpath, 'E: SUBSYSTEM=' + subsystem]
        lines += ['E: %s=%s' % kv for kv in props]
        lines += ['A: %s=%s' % (k, esc(v + '\n')) for k, v in attrs.items()]
        lines += ['H: %s=%s' % (k, v.hex().upper()) for k, v in (binattrs or {}).items()]
        self.tb.add_from_string('\n'.join(lines) + '\n')
        return '/sys' + devpath

    def set_driver_link(self, devpath, driver, bus='usb'):
        # plain file operations: umockdev's set_attribute*() abort the process on failure
        link = os.path.join(self.root, devpath.lstrip('/'), 'driver')
        try:
            if os.path.lexists(link):
                os.unlink(link)
            if driver:
                target = os.path.join(self.root, 'sys/bus', bus, 'drivers', driver)
                os.makedirs(target, exist_ok=True)
                os.symlink(os.path.relpath(target, os.path.dirname(link)), link)
        except OSError as exc:
            log('sysfs driver link %s: %s' % (link, exc), 1)

    def write_attr(self, devpath, name, value):
        path = os.path.join(self.root, devpath.lstrip('/'), name)
        try:
            with open(path, 'w') as f:
                f.write(value)
        except OSError as exc:
            log('sysfs attribute %s: %s' % (path, exc), 1)

    def current_mode(self):
        return 0 if self.denied else self.args.node_mode

    def _build_static_tree(self):
        tb = self.tb
        for drv in ('usb', 'usbfs', 'cdc_acm', 'hub'):
            os.makedirs(os.path.join(self.root, 'sys/bus/usb/drivers', drv), exist_ok=True)
        pci = '/devices/pci0000:00/0000:00:14.0'
        self.add_sysfs(pci, 'pci', {'vendor': '0x8086', 'device': '0xa36d', 'class': '0x0c0330'},
                       [('DRIVER', 'xhci_hcd'), ('PCI_CLASS', 'C0330'), ('PCI_ID', '8086:A36D')])
        self.set_driver_link('/sys' + pci, 'xhci_hcd', bus='pci')
        uname = os.uname().release
        major, minor = (uname.split('.') + ['0'])[:2]
        try:
            bcd = int(major) << 8 | int(minor[:2] or 0)
        except ValueError:
            bcd = 0x0601
        hub_dev = device_descriptor(0x1D6B, 0x0002, bcd_device=bcd, dev_class=(9, 0, 1),
                                    strings=(3, 2, 1))
        self.roothub_devpath = pci + '/usb1'
        self.roothub_path = self.add_sysfs(self.roothub_devpath, 'usb', {
            'idVendor': '1d6b', 'idProduct': '0002', 'bcdDevice': '%04x' % bcd,
            'manufacturer': 'Linux %s xhci-hcd' % uname, 'product': 'xHCI Host Controller',
            'serial': '0000:00:14.0', 'busnum': '1', 'devnum': '1', 'devpath': '0',
            'speed': '480', 'version': ' 2.00', 'bDeviceClass': '09', 'bDeviceSubClass': '00',
            'bDeviceProtocol': '01', 'bMaxPacketSize0': '64', 'bNumConfigurations': '1',
            'bConfigurationValue': '1', 'bNumInterfaces': ' 1', 'bmAttributes': 'e0',
            'bMaxPower': '0mA', 'maxchild': '12', 'removable': 'unknown', 'authorized': '1',
            'authorized_default': '1', 'quirks': '0x0', 'rx_lanes': '1', 'tx_lanes': '1',
            'configuration': '', 'dev': '189:0'},
            [('DEVNAME', '/dev/bus/usb/001/001'), ('DEVTYPE', 'usb_device'), ('DRIVER', 'usb'),
             ('PRODUCT', '1d6b/2/%x' % bcd), ('TYPE', '9/0/1'), ('BUSNUM', '001'),
             ('DEVNUM', '001'), ('MAJOR', '189'), ('MINOR', '0')],
            {'descriptors': hub_dev + roothub_config_descriptor()})
        self.set_driver_link(self.roothub_path, 'usb')
        hub_if = self.add_sysfs(self.roothub_devpath + '/1-0:1.0', 'usb', {
            'bInterfaceNumber': '00', 'bAlternateSetting': ' 0', 'bNumEndpoints': '01',
            'bInterfaceClass': '09', 'bInterfaceSubClass': '00', 'bInterfaceProtocol': '00'},
            [('DEVTYPE', 'usb_interface'), ('DRIVER', 'hub'), ('INTERFACE', '9/0/0')])
        self.set_driver_link(hub_if, 'hub')
        # The root hub's node exists (a real one is always there) but is a plain file without
        # an ioctl handler: do not open it.
        node = os.path.join(self.root, 'dev/bus/usb/001/001')
        os.makedirs(os.path.dirname(node), exist_ok=True)
        with open(node, 'wb'):
            pass
        os.chmod(node, 0o664)

    # ------------------------------------------------------------- board lifecycle

    def plug(self):
        with self.lock:
            if self.closing:
                raise RuntimeError('shutting down')
            board = Board(self, self.next_devnum)
            self.next_devnum = self.next_devnum + 1 if self.next_devnum < 127 else 2
            board.plug()
            self.board = board
            return board

    def unplug(self, quiet=False):
        with self.lock:
            board = self.board
            if board is None or not board.plugged:
                return None
            self.board = None
            if any(not c.gone for c in board.clients.values()):
                self.old_boards.append(board)
        board.unplug(quiet=quiet)
        return board

    def start_janitor(self):
        def sweep():
            while True:
                time.sleep(0.5)
                with self.lock:
                    if self.closing:
                        return
                    for board in [self.board] + self.old_boards:
                        if board is not None:
                            board.purge_closed()
        threading.Thread(target=sweep, daemon=True, name='janitor').start()

    def forget_board_if_idle(self, board):
        if board is not self.board and board in self.old_boards and \
                not any(not c.gone for c in board.clients.values()):
            self.old_boards.remove(board)

    def set_denied(self, denied):
        with self.lock:
            self.denied = denied
            board = self.board
            if board is not None and board.plugged:
                os.chmod(board.pts, self.current_mode())

    # ------------------------------------------------------------- control channel

    def command(self, line):
        parts = line.split()
        if not parts:
            return 'error empty command'
        cmd, rest = parts[0].lower(), parts[1:]
        try:
            if cmd == 'unplug':
                board = self.unplug()
                if board is None:
                    return 'error not plugged'
                return 'ok unplugged %s' % board.devnode
            if cmd in ('replug', 'plug'):
                cycled = ''
                with self.lock:
                    plugged = self.board is not None and self.board.plugged
                if plugged:
                    if cmd == 'plug':
                        return 'error already plugged (use replug to power-cycle)'
                    old = self.unplug()
                    cycled = ' (power-cycled %s)' % old.devnode
                    time.sleep(self.args.replug_delay)
                board = self.plug()
                return 'ok plugged %s devnum=%d%s' % (board.devnode, board.devnum, cycled)
            if cmd in ('garbage', 'inject'):
                board = self.board
                if board is None or not board.plugged:
                    return 'error not plugged'
                if cmd == 'garbage':
                    if len(rest) != 1 or not rest[0].isdigit() or not 0 < int(rest[0]) <= 65536:
                        return 'error usage: garbage N (1..65536)'
                    data = os.urandom(int(rest[0]))
                else:
                    data = bytes.fromhex(''.join(rest))
                    if not data:
                        return 'error usage: inject HEXBYTES'
                board.inject(data)
                return 'ok injected %d byte(s): %s' % (len(data), data.hex())
            if cmd == 'deny':
                self.set_denied(True)
                note = '' if self.caps_dropped or os.geteuid() != 0 else \
                    ' (warning: COMMAND keeps CAP_DAC_OVERRIDE, so open() still succeeds)'
                return 'ok node mode 0000%s' % note
            if cmd == 'allow':
                self.set_denied(False)
                return 'ok node mode %04o' % self.args.node_mode
            if cmd == 'status':
                with self.lock:
                    board = self.board
                    if board is None:
                        return 'ok plugged=0 next_devnum=%d denied=%d' % (self.next_devnum,
                                                                          self.denied)
                    board.purge_closed()
                    return 'ok %s denied=%d' % (board.status(), self.denied)
            if cmd == 'help':
                return ('ok commands: unplug | replug | plug | garbage N | inject HEX | deny | '
                        'allow | status')
            return 'error unknown command %r (try help)' % cmd
        except Exception as exc:
            log('control command %r failed:\n%s' % (line, traceback.format_exc()))
            return 'error %s' % exc

    def start_control(self, path):
        if os.path.exists(path) and stat.S_ISFIFO(os.stat(path).st_mode):
            fd = os.open(path, os.O_RDWR)       # O_RDWR: never sees EOF, writers never block
            threading.Thread(target=self._fifo_loop, args=(fd,), daemon=True,
                             name='control-fifo').start()
            log('control: FIFO %s (one command per line, replies go to the log)' % path)
            return
        if os.path.exists(path) or os.path.islink(path):
            if stat.S_ISSOCK(os.lstat(path).st_mode):
                os.unlink(path)
            else:
                raise SystemExit('emulated_board: --control %s exists and is neither a FIFO nor '
                                 'a socket' % path)
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
        srv.listen(8)
        self.control_server = (srv, path)
        threading.Thread(target=self._accept_loop, args=(srv,), daemon=True,
                         name='control').start()
        log('control: unix socket %s' % path, 1)

    def _fifo_loop(self, fd):
        buf = b''
        while True:
            try:
                data = os.read(fd, 4096)
            except OSError:
                return
            if not data:
                time.sleep(0.05)
                continue
            buf += data
            while b'\n' in buf:
                line, buf = buf.split(b'\n', 1)
                line = line.decode('utf-8', 'replace').strip()
                if line:
                    log('control %r -> %s' % (line, self.command(line)))

    def _accept_loop(self, srv):
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=self._serve_conn, args=(conn,), daemon=True).start()

    def _serve_conn(self, conn):
        with conn:
            f = conn.makefile('rb')
            for raw in f:
                line = raw.decode('utf-8', 'replace').strip()
                if not line:
                    continue
                reply = self.command(line)
                log('control %r -> %s' % (line, reply))
                try:
                    conn.sendall((reply + '\n').encode())
                except OSError:
                    return

    # ------------------------------------------------------------- COMMAND

    def run(self, command):
        env = dict(os.environ)
        env['UMOCKDEV_DIR'] = self.root
        if PRELOAD not in env.get('LD_PRELOAD', '').split(':'):
            env['LD_PRELOAD'] = PRELOAD + (':' + env['LD_PRELOAD'] if env.get('LD_PRELOAD') else '')
        if self.control_server is not None or self.args.control:
            env['EMULATED_BOARD_CONTROL'] = os.path.abspath(self.args.control)
        env['EMULATED_BOARD_SERIAL'] = self.args.serial
        argv = list(command)
        self.caps_dropped = False
        if os.geteuid() == 0 and not self.args.keep_caps:
            setpriv = shutil.which('setpriv')
            if setpriv:
                # root ignores file modes; without these two capabilities the node's mode
                # decides, so `deny` yields a real EACCES from open()
                argv = [setpriv, '--bounding-set', '-dac_override,-dac_read_search', '--'] + argv
                self.caps_dropped = True
            else:
                log('warning: setpriv not found; COMMAND keeps CAP_DAC_OVERRIDE (deny has no '
                    'effect)')
        log('running %s' % ' '.join(command), 1)
        try:
            self.child = subprocess.Popen(argv, env=env)
        except OSError as exc:
            log('cannot run %s: %s' % (command[0], exc))
            return 127

        def forward(signum, _frame):
            if self.child and self.child.poll() is None:
                if signum == signal.SIGINT and os.isatty(0):
                    return     # the terminal already sent it to COMMAND (same process group)
                try:
                    self.child.send_signal(signum)
                except OSError:
                    pass

        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, forward)
        # Python runs signal handlers on the main thread only, and a signal the kernel hands to
        # one of the other threads (GLib's, the UWBS relay's) does not interrupt a blocking
        # waitpid here: the handler would wait until COMMAND exited on its own, and a SIGTERM
        # meant for COMMAND was lost (the USB end-to-end check hung in `wait` about one run in
        # seven). Waiting in short slices lets the handler run within 0.1 s whichever thread
        # took the signal.
        while True:
            try:
                rc = self.child.wait(timeout=0.1)
                break
            except subprocess.TimeoutExpired:
                continue
        return 128 - rc if rc < 0 else rc

    def shutdown(self):
        try:
            with self.lock:
                self.closing = True
                board = self.board
            if board is not None:
                board.unplug(quiet=True)
            for old in list(self.old_boards):
                if old.helper is not None:
                    old.helper.kill()
        except Exception:
            log('cleanup: %s' % traceback.format_exc())
        if self.control_server is not None:
            srv, path = self.control_server
            try:
                srv.close()
                os.unlink(path)
            except OSError:
                pass
        with self.lock:
            shutil.rmtree(self.root, ignore_errors=True)


PRELOAD = 'libumockdev-preload.so.0'


def parse_uci(spec):
    if spec is None or spec.lower() in ('', 'none', 'off'):
        return None
    if spec.startswith('tcp:'):
        spec = spec[4:]
    host, sep, port = spec.rpartition(':')
    if not sep or not port.isdigit():
        raise SystemExit('emulated_board: --uci wants HOST:PORT (or none), got %r' % spec)
    return (host or '127.0.0.1', int(port))


def ctl_main(argv):
    """emulated_board.py ctl PATH COMMAND... : send one command, print the reply."""
    if len(argv) < 2:
        sys.stderr.write('usage: emulated_board.py ctl CONTROL_SOCKET COMMAND [ARGS...]\n')
        return 2
    path, line = argv[0], ' '.join(argv[1:])
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(30)
        s.connect(path)
        s.sendall((line + '\n').encode())
        reply = b''
        while not reply.endswith(b'\n'):
            data = s.recv(4096)
            if not data:
                break
            reply += data
    text = reply.decode().strip()
    print(text)
    return 0 if text.startswith('ok') else 1


def main(argv):
    global VERBOSE, LOG_FILE
    if argv and argv[0] == 'ctl':
        return ctl_main(argv[1:])
    if PRELOAD not in os.environ.get('LD_PRELOAD', '').split(':'):
        # Run this process under the umockdev preload too: the testbed checks parents, and its
        # uevent sender looks devices up, through the (redirected) /sys.
        env = dict(os.environ)
        env.pop('UMOCKDEV_DIR', None)
        env['LD_PRELOAD'] = PRELOAD + (':' + env['LD_PRELOAD'] if env.get('LD_PRELOAD') else '')
        os.execve(sys.executable, [sys.executable, os.path.abspath(__file__)] + argv, env)
    if '--' not in argv:
        if any(a in ('-h', '--help') for a in argv):
            argv = argv + ['--', 'true']
        else:
            sys.stderr.write('emulated_board: missing "-- COMMAND [ARGS...]" (see --help)\n')
            return 2
    split = argv.index('--')
    opts, command = argv[:split], argv[split + 1:]
    p = argparse.ArgumentParser(
        prog='emulated_board.py',
        usage='%(prog)s --uci HOST:PORT|none [options] -- COMMAND [ARGS...]',
        description='Run COMMAND with an emulated DWM3001CDK (CDC-ACM, FiRa UCI) on USB bus 001, '
                    'via umockdev. Exit status is COMMAND\'s.')
    p.add_argument('--uci', default=None, metavar='HOST:PORT',
                   help='UWBS to connect the board to (raw UCI over TCP, one connection per '
                        'plug); "none" or absent: the board answers nothing')
    p.add_argument('--serial', default='0123456789AB', help='USB serial number (default %(default)s)')
    p.add_argument('--pid', default=0x520F, type=lambda s: int(s, 0),
                   help='USB product id (default 0x520f)')
    p.add_argument('--devnum', default=2, type=int, help='first device number (default 2)')
    p.add_argument('--control', metavar='PATH',
                   help='control channel: a unix stream socket created at PATH (line commands, '
                        'one reply line each); if PATH is an existing FIFO, it is read instead '
                        '(no replies)')
    p.add_argument('--node-mode', default=0o664, type=lambda s: int(s, 8),
                   help='mode of the usbfs node, octal (default 0664, as udev leaves it '
                        'without a rule; owner root)')
    p.add_argument('--start-unplugged', action='store_true',
                   help='start with no board; plug it later with the "plug" command')
    p.add_argument('--pre-dtr', choices=('hold', 'drop'), default='hold',
                   help='UWBS bytes arriving while DTR is off: hold them until DTR (default) '
                        'or drop them')
    p.add_argument('--in-framing', choices=('uci', 'stream'), default='uci',
                   help='bulk IN transfer boundaries: one UCI packet per transfer (default), '
                        'or TCP reads as they come')
    p.add_argument('--replug-delay', default=0.2, type=float,
                   help='seconds between the unplug and plug halves of "replug" on a plugged '
                        'board (default 0.2)')
    p.add_argument('--keep-caps', action='store_true',
                   help='as root, do not drop CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH from COMMAND '
                        '(then deny/--node-mode have no effect)')
    p.add_argument('--log', metavar='FILE', help='write the log to FILE instead of stderr')
    p.add_argument('-v', '--verbose', action='count', default=0,
                   help='more log: -v lifecycle details, -vv every URB, -vvv every ioctl')
    args = p.parse_args(opts)
    if not command:
        p.error('no COMMAND after --')
    if not (len(args.serial) and args.serial.isprintable()):
        p.error('bad --serial')
    VERBOSE = args.verbose
    if args.log:
        LOG_FILE = open(args.log, 'a', buffering=1)
    fx = Fixture(args)
    rc = 1
    try:
        if args.control:
            fx.start_control(args.control)
        if not args.start_unplugged:
            fx.plug()
        fx.start_janitor()
        rc = fx.run(command)
    finally:
        fx.shutdown()
        t = os.times()
        log('COMMAND exited with %d; emulator CPU %.2fs user %.2fs system' % (rc, t.user, t.system))
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(rc)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
