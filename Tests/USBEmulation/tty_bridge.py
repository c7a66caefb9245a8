#!/usr/bin/python3
"""A serial port stand-in: a pseudo-terminal whose other end is a TCP connection to a UWBS.

    tty_bridge.py HOST:PORT LINK

Creates a pty, makes LINK a symlink to its device (like /dev/serial/by-id/...), connects to
HOST:PORT and copies bytes both ways until either side closes. The slave is left in its default
(cooked) mode on purpose: the program under test must switch it to raw itself, or bytes such as
0x0D and 0x0A are rewritten and echoed and UCI breaks.
"""
import os
import select
import socket
import sys

host, port = sys.argv[1].rsplit(":", 1)
link = sys.argv[2]
main, secondary = os.openpty()
path = os.ttyname(secondary)
os.close(secondary)  # reopened by the program under test; the pty lives while `main` is open
if os.path.lexists(link):
    os.unlink(link)
os.symlink(path, link)
uwbs = socket.create_connection((host, int(port)))
print(f"tty_bridge: {link} -> {path} <-> {host}:{port}", file=sys.stderr, flush=True)
try:
    while True:
        ready, _, _ = select.select([main, uwbs], [], [])
        if main in ready:
            try:
                data = os.read(main, 4096)
            except OSError:  # EIO while nobody has the slave open
                select.select([uwbs], [], [], 0.05)
                continue
            uwbs.sendall(data)
        if uwbs in ready:
            data = uwbs.recv(4096)
            if not data:
                break
            os.write(main, data)
finally:
    os.unlink(link)
