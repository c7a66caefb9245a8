#!/usr/bin/python3
"""A tiny FiRa UCI responder on TCP, enough for the USB emulation self-test without the
nearby-bridge world server. One TCP connection = one UWBS, raw UCI packets back to back.

    fake_uwbs.py [--port 0] [--boot-ntf]

Prints "PORT <n>" on stdout once listening. Answers:
  CORE_DEVICE_RESET     -> RSP OK, then CORE_DEVICE_STATUS_NTF READY
  CORE_GET_DEVICE_INFO  -> RSP OK, UCI 2.0, MAC 1.3.0, PHY 1.3.0, test 1.1.0, vendor "EMUB"+n
                           (n = connection number, so a replugged board is recognisably new)
  CORE_GET_CAPS_INFO    -> RSP OK with no TLVs
  other control cmds    -> RSP with the same GID/OID and status UNKNOWN_OID (0x08)
  data packets          -> ignored
--boot-ntf sends CORE_DEVICE_STATUS_NTF READY when a connection opens, as a board does after
power-on.
"""
import argparse
import socket
import sys
import threading

STATUS_OK = 0x00
STATUS_UNKNOWN_OID = 0x08


def control(mt, gid, oid, payload):
    return bytes([(mt << 5) | gid, oid, 0, len(payload)]) + bytes(payload)


def status_ntf(state=0x01):
    return control(3, 0, 0x01, [state])


def serve(conn, number, boot_ntf):
    buf = b''
    with conn:
        if boot_ntf:
            conn.sendall(status_ntf())
        while True:
            try:
                data = conn.recv(4096)
            except OSError:
                return
            if not data:
                return
            buf += data
            while len(buf) >= 4:
                mt = buf[0] >> 5
                size = 4 + (buf[3] if mt in (1, 2, 3) else buf[2] | buf[3] << 8)
                if len(buf) < size:
                    break
                packet, buf = buf[:size], buf[size:]
                if mt != 1:
                    continue
                gid, oid = packet[0] & 0x0F, packet[1] & 0x3F
                if (gid, oid) == (0, 0x00):
                    out = control(2, 0, 0x00, [STATUS_OK]) + status_ntf()
                elif (gid, oid) == (0, 0x02):
                    vendor = b'EMUB' + bytes([number & 0xFF])
                    out = control(2, 0, 0x02, bytes([STATUS_OK, 0x02, 0x00, 0x01, 0x30, 0x01, 0x30,
                                                     0x01, 0x10, len(vendor)]) + vendor)
                elif (gid, oid) == (0, 0x03):
                    out = control(2, 0, 0x03, [STATUS_OK, 0])
                else:
                    out = control(2, gid, oid, [STATUS_UNKNOWN_OID])
                try:
                    conn.sendall(out)
                except OSError:
                    return


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--port', type=int, default=0)
    p.add_argument('--boot-ntf', action='store_true')
    args = p.parse_args()
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(('127.0.0.1', args.port))
    srv.listen(8)
    print('PORT %d' % srv.getsockname()[1], flush=True)
    number = 0
    while True:
        conn, _ = srv.accept()
        number += 1
        sys.stderr.write('fake_uwbs: connection %d\n' % number)
        threading.Thread(target=serve, args=(conn, number, args.boot_ntf), daemon=True).start()


if __name__ == '__main__':
    try:
        main()
    except KeyboardInterrupt:
        pass
