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
                       power-cycled chip would; peers see a supervision timeout, the kernel
                       of I is not told (combine with hwerror).
    rssi I J DBM|off   controller I hears controller J's advertising at DBM (default -50);
                       off: out of range, I no longer sees J's adverts (links stay up)
    failscanoff I [N]  controller I fails the next N (default 1) scan-disable commands with
                       Command Disallowed and keeps scanning: Linux 6.1 then wedges its
                       discovery state (Start Discovery: Busy, Stop Discovery: Rejected)
    status             one line per controller: index, port, address, connected or not
A command can also be sent with:  bumble_controllers.py ctl PATH COMMAND...

Attackers (issue 35): --attack KIND[,KIND...] puts one Bumble host per kind on the same air
(bumble_attackers.py: advertReplay, handshakeReplay, garbage, connectionFlood); --attack-report
FILE gets their counts as JSON every second.

An iPhone (issue 33): --iphone REPORT puts an iPhone's Nearby Interaction app on the same air
(bumble_iphone.py: Apple's accessory message flow over Qorvo's NI service); --iphone-find says
whether it looks for an advert naming the service (bluetoothd's) or the rig's peer advert.
An Android phone (issue 31): --android REPORT likewise (bumble_android.py: the ranging OOB
exchange over the rig's OOB service, spec version --android-version), --android-find oob|rig.

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

def build_controller_class(le_mode: str):
    """Bumble's Controller with the rig's fixes (see README.md, "Bumble behaviour")."""
    import asyncio as _asyncio
    import struct

    from bumble import controller as bc
    from bumble import hci, ll
    from bumble.controller import Controller

    # -- advertisers: put the advertising properties and the scan response on the "air" --------
    def legacy_timer_fired(self) -> None:
        self.send_advertising_data()
        # the interval is in 0.625 ms units (Bumble used it as milliseconds)
        interval = max(self.advertising_interval_min * 0.625 / 1000.0, 0.02)
        self.timer_handle = _asyncio.get_running_loop().call_later(interval, self._on_timer_fired)

    def legacy_send(self) -> None:
        if not self.enabled:
            return
        adv_type = self.advertising_type
        if adv_type in (1, 4):  # directed advertising: not simulated
            return
        pdu = ll.AdvInd(advertiser_address=self.address, data=bytes(self.advertising_data))
        pdu.rig_connectable = adv_type == 0                 # ADV_IND
        pdu.rig_scannable = adv_type in (0, 2)              # ADV_IND, ADV_SCAN_IND
        pdu.rig_legacy = True
        pdu.rig_scan_response = bytes(self.scan_response_data)
        pdu.rig_sender = self.controller
        self.controller.send_advertising_pdu(pdu)

    def ext_send(self) -> None:
        if not self.controller.link:
            return
        address = self.address
        if address is None:
            return
        props = self.parameters.advertising_event_properties if self.parameters else 0x13
        if props & 0x04:  # directed: not simulated
            return
        pdu = ll.AdvExtInd(
            advertiser_address=address, data=bytes(self.data),
            sid=self.parameters.advertising_sid if self.parameters else 0,
            periodic_advertising_data=(bytes(self.periodic_advertising_data)
                                       if self.periodic_advertising_data else None))
        pdu.rig_connectable = bool(props & 0x01)
        pdu.rig_scannable = bool(props & 0x02)
        pdu.rig_legacy = bool(props & 0x10)
        pdu.rig_scan_response = bytes(self.scan_response_data)
        pdu.rig_sender = self.controller
        self.controller.send_advertising_pdu(pdu)

    bc.LegacyAdvertiser._on_timer_fired = legacy_timer_fired
    bc.LegacyAdvertiser.send_advertising_data = legacy_send
    bc.AdvertisingSet.send_extended_advertising_data = ext_send

    EXT_COMMANDS = {
        hci.HCI_LE_SET_ADVERTISING_SET_RANDOM_ADDRESS_COMMAND,
        hci.HCI_LE_SET_EXTENDED_ADVERTISING_PARAMETERS_COMMAND,
        hci.HCI_LE_SET_EXTENDED_ADVERTISING_DATA_COMMAND,
        hci.HCI_LE_SET_EXTENDED_SCAN_RESPONSE_DATA_COMMAND,
        hci.HCI_LE_SET_EXTENDED_ADVERTISING_ENABLE_COMMAND,
        hci.HCI_LE_READ_MAXIMUM_ADVERTISING_DATA_LENGTH_COMMAND,
        hci.HCI_LE_READ_NUMBER_OF_SUPPORTED_ADVERTISING_SETS_COMMAND,
        hci.HCI_LE_REMOVE_ADVERTISING_SET_COMMAND,
        hci.HCI_LE_CLEAR_ADVERTISING_SETS_COMMAND,
        hci.HCI_LE_SET_EXTENDED_SCAN_PARAMETERS_COMMAND,
        hci.HCI_LE_SET_EXTENDED_SCAN_ENABLE_COMMAND,
        hci.HCI_LE_EXTENDED_CREATE_CONNECTION_COMMAND,
    }

    # What a dual-mode controller claims beyond Bumble's LE set: inquiry and what the kernel
    # sends unconditionally at a BR/EDR controller's initialisation.
    DUAL_COMMANDS = {
        hci.HCI_INQUIRY_COMMAND,
        hci.HCI_INQUIRY_CANCEL_COMMAND,
        hci.HCI_READ_VOICE_SETTING_COMMAND,
        hci.HCI_READ_NUMBER_OF_SUPPORTED_IAC_COMMAND,
        hci.HCI_READ_CURRENT_IAC_LAP_COMMAND,
        hci.HCI_WRITE_CONNECTION_ACCEPT_TIMEOUT_COMMAND,
        hci.HCI_WRITE_SCAN_ENABLE_COMMAND,
        hci.HCI_READ_LOCAL_NAME_COMMAND,
        hci.HCI_WRITE_LOCAL_NAME_COMMAND,
        hci.HCI_READ_CLASS_OF_DEVICE_COMMAND,
        hci.HCI_WRITE_CLASS_OF_DEVICE_COMMAND,
    }

    class RigController(Controller):
        hci_logger: logging.Logger | None = None
        index = 0

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            if le_mode == "ext":
                # claim the extended scan and connection commands too, as BT 5 chips do: then
                # the kernel uses extended advertising, scanning and connection commands
                self.supported_commands = set(Controller.supported_commands) | EXT_COMMANDS
            elif le_mode in ("legacy", "dual"):
                self.le_features = Controller.le_features & ~(
                    hci.LeFeatureMask.LE_EXTENDED_ADVERTISING | hci.LeFeatureMask.LE_PERIODIC_ADVERTISING)
            if le_mode == "dual":
                # BR/EDR and LE, like a Pi 4/5's CYW43455/CYW43439 (legacy LE advertising): the
                # kernel then initialises BR/EDR too, and bluetoothd's discovery is interleaved
                # (LE scan, then inquiry). Inquiry finds nobody: the air holds no BR/EDR device.
                self.lmp_features = (Controller.lmp_features & ~hci.LmpFeatureMask.BR_EDR_NOT_SUPPORTED) | (
                    hci.LmpFeatureMask.SIMULTANEOUS_LE_AND_BR_EDR_TO_SAME_DEVICE_CAPABLE_CONTROLLER)
                self.supported_commands = set(Controller.supported_commands) | DUAL_COMMANDS
                self.rig_inquiry: _asyncio.TimerHandle | None = None
            self.le_acl_data_packet_length = 251
            self.rig_scan_ext = False        # the host scans with the extended commands
            self.rig_scan_active = False
            self.rig_rssi: dict[int, int | None] = {}   # advertiser index -> rssi (None: out of range)
            self.rig_local_disconnect = False
            self.rig_fail_scan_disable = 0     # scan-disable commands still to fail (failscanoff)
            self.rig_adv_timers: dict[int, _asyncio.TimerHandle] = {}   # advertising handle -> duration timer

        # logging
        def on_hci_packet(self, packet):
            if self.hci_logger:
                self.hci_logger.info("[%s] host>ctrl %s", self.name, summarize(packet))
            super().on_hci_packet(packet)

        def send_hci_packet(self, packet):
            if self.hci_logger:
                self.hci_logger.info("[%s] ctrl>host %s", self.name, summarize(packet))
            super().send_hci_packet(packet)

        def rig_send_raw(self, raw: bytes, what: str) -> None:
            if self.hci_logger:
                self.hci_logger.info("[%s] ctrl>host EVT %s %s", self.name, what, raw[3:].hex())
            if self.host:
                _asyncio.get_running_loop().call_soon(self.host.on_packet, raw)

        # scanning: remember the command family and the scan type
        def on_hci_le_set_scan_parameters_command(self, command):
            result = super().on_hci_le_set_scan_parameters_command(command)
            if not self.le_scan_enable:
                self.rig_scan_active = command.le_scan_type == 1
            return result

        def rig_failed_scan_disable(self, enable: int):
            if enable or self.rig_fail_scan_disable == 0:
                return None
            self.rig_fail_scan_disable -= 1
            log.info("controller %d: failing a scan-disable command (fault)", self.index)
            return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR)

        def on_hci_le_set_scan_enable_command(self, command):
            self.rig_scan_ext = False
            failed = self.rig_failed_scan_disable(command.le_scan_enable)
            return failed if failed is not None else super().on_hci_le_set_scan_enable_command(command)

        def on_hci_le_set_extended_scan_parameters_command(self, command):
            self.rig_scan_active = bool(command.scan_types) and command.scan_types[0] == 1
            return super().on_hci_le_set_extended_scan_parameters_command(command)

        def on_hci_le_set_extended_scan_enable_command(self, command):
            self.rig_scan_ext = True
            failed = self.rig_failed_scan_disable(command.enable)
            return failed if failed is not None else super().on_hci_le_set_extended_scan_enable_command(command)

        # advertising reports: real event types, scan responses, RSSI per advertiser
        def on_advertising_pdu(self, pdu):
            scan_enable, pending = self.le_scan_enable, self.pending_le_connection
            # let Bumble handle periodic advertising sync, but not reports and connections
            self.le_scan_enable, self.pending_le_connection = False, None
            try:
                super().on_advertising_pdu(pdu)
            finally:
                self.le_scan_enable = scan_enable
                if self.pending_le_connection is None:
                    self.pending_le_connection = pending
            sender = getattr(pdu, "rig_sender", None)
            rssi = self.rig_rssi.get(getattr(sender, "index", -1), -50)
            if rssi is None:  # out of range
                return
            connectable = getattr(pdu, "rig_connectable", True)
            if self.le_scan_enable:
                self.rig_report(pdu, rssi)
            if pending is not None and connectable and pending.peer_address == pdu.advertiser_address:
                self.create_le_connection(pdu.advertiser_address)

        def rig_report(self, pdu, rssi: int) -> None:
            connectable = getattr(pdu, "rig_connectable", True)
            scannable = getattr(pdu, "rig_scannable", True)
            legacy = getattr(pdu, "rig_legacy", not isinstance(pdu, ll.AdvExtInd))
            scan_response = getattr(pdu, "rig_scan_response", b"")
            address = pdu.advertiser_address
            addr_type = address.address_type
            reports = []
            if self.rig_scan_ext:
                base = (1 if connectable else 0) | (2 if scannable else 0) | (0x10 if legacy else 0)
                reports.append((base, pdu.data))
                if self.rig_scan_active and scannable:
                    reports.append((base | 0x08, scan_response))
                for event_type, data in reports:
                    body = struct.pack("<BBHB6sBBBbbHB6sB", 0x0D, 1, event_type, addr_type, bytes(address),
                                       1, 0 if legacy else 1, 0xFF if legacy else getattr(pdu, "sid", 0),
                                       0x7F, rssi, 0, 0, bytes(6), len(data)) + data
                    self.rig_send_raw(bytes([0x04, 0x3E, len(body)]) + body,
                                      f"LE_EXTENDED_ADVERTISING_REPORT type=0x{event_type:02x}")
            else:
                if not legacy:  # a legacy scanner cannot see extended advertising PDUs
                    return
                reports.append((0 if connectable else (2 if scannable else 3), pdu.data))
                if self.rig_scan_active and scannable:
                    reports.append((4, scan_response))
                for event_type, data in reports:
                    body = struct.pack("<BBBB6sB", 0x02, 1, event_type, addr_type, bytes(address), len(data)) \
                        + data + struct.pack("<b", rssi)
                    self.rig_send_raw(bytes([0x04, 0x3E, len(body)]) + body,
                                      f"LE_ADVERTISING_REPORT type={event_type}")

        # A central's CONNECT_IND the advertiser did not take (it had just taken another
        # central's and stopped advertising): Bumble reports the connection complete anyway and
        # the link is dead. A real central reports Disconnection Complete with 0x3E (connection
        # failed to be established) when the peripheral never answers: so does this one.
        def create_le_connection(self, peer_address):
            pending = self.pending_le_connection
            super().create_le_connection(peer_address)
            connection = self.le_connections.get(pending.peer_address) if pending else None
            if connection is not None:
                _asyncio.get_running_loop().call_later(0.05, self.rig_check_established, connection)

        def rig_check_established(self, connection) -> None:
            if self.le_connections.get(connection.peer_address) is not connection:
                return
            for c in self.link.controllers:
                peer = c.le_connections.get(connection.self_address)
                if c is not self and peer is not None and peer.self_address == connection.peer_address:
                    return
            log.info("controller %s: CONNECT_IND to %s not taken: connection failed to be established",
                     self.name, connection.peer_address)
            del self.le_connections[connection.peer_address]
            self.send_hci_packet(hci.HCI_Disconnection_Complete_Event(
                status=hci.HCI_ErrorCode.SUCCESS, connection_handle=connection.handle,
                reason=hci.HCI_ErrorCode.CONNECTION_FAILED_TO_BE_ESTABLISHED_ERROR))

        # Create Connection Cancel: end the pending connection as a controller does
        def on_hci_le_create_connection_cancel_command(self, command):
            pending = self.pending_le_connection
            if pending is None:
                return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR)
            self.pending_le_connection = None
            peer = pending.peer_address
            body = struct.pack("<BBHBB6sHHHB", 0x01, hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR,
                               0, 0, peer.address_type, bytes(peer), 0, 0, 0, 0)
            _asyncio.get_running_loop().call_soon(
                self.rig_send_raw, bytes([0x04, 0x3E, len(body)]) + body,
                "LE_CONNECTION_COMPLETE status=UNKNOWN_CONNECTION_IDENTIFIER (cancelled)")
            return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)

        # the side that disconnects sees "terminated by local host", as with real controllers
        def on_hci_disconnect_command(self, command):
            self.rig_local_disconnect = True
            try:
                return super().on_hci_disconnect_command(command)
            finally:
                self.rig_local_disconnect = False

        def on_le_disconnected(self, connection, reason):
            if self.rig_local_disconnect:
                reason = hci.HCI_ErrorCode.CONNECTION_TERMINATED_BY_LOCAL_HOST_ERROR
            super().on_le_disconnected(connection, reason)

        # extended advertising: a set enabled with a duration stops after it and the host gets
        # LE Advertising Set Terminated (status 0x3C, Advertising Timeout), as on a real
        # controller; Bumble ignores the duration. The kernel hands an instance's timeout to
        # the controller this way, so without it a killed rig would stay on the air.
        def on_hci_le_set_extended_advertising_enable_command(self, command):
            result = super().on_hci_le_set_extended_advertising_enable_command(command)
            timers = self.rig_adv_timers
            handles = command.advertising_handles if command.advertising_handles or command.enable else list(timers)
            for handle in handles:
                if timer := timers.pop(handle, None):
                    timer.cancel()
            if command.enable:
                loop = _asyncio.get_running_loop()
                for handle, duration in zip(command.advertising_handles, command.durations):
                    if duration and handle in self.advertising_sets:
                        timers[handle] = loop.call_later(duration / 100.0, self.rig_advertising_timeout, handle)
            return result

        # A set that a connection ended is over: its duration no longer runs (Core Spec Vol 4
        # Part E §7.7.65.18: Advertising Set Terminated is sent once, with the connection's
        # handle). The kernel enables it again, with the whole duration, when that connection
        # ends (Linux 6.1 hci_disconn_complete_evt). Left running, the timer ended the set while
        # the kernel thought it connected: the killed rig left the air in some runs only.
        def on_le_connect_ind(self, packet):
            enabled = {handle for handle, s in self.advertising_sets.items() if s.enabled}
            super().on_le_connect_ind(packet)
            for handle in enabled:
                if not self.advertising_sets[handle].enabled and (timer := self.rig_adv_timers.pop(handle, None)):
                    timer.cancel()

        def rig_advertising_timeout(self, handle: int) -> None:
            self.rig_adv_timers.pop(handle, None)
            if advertising_set := self.advertising_sets.get(handle):
                advertising_set.stop()
                self.send_hci_packet(hci.HCI_LE_Advertising_Set_Terminated_Event(
                    status=hci.HCI_ErrorCode.ADVERTISING_TIMEOUT_ERROR, advertising_handle=handle,
                    connection_handle=0, num_completed_extended_advertising_events=0))

        # BR/EDR commands the kernel sends a dual-mode controller at initialisation whatever its
        # supported-commands bitmap says (6.1 hci_sync.c br_init2), with the values a CYW43455
        # reports; Bumble has no handlers for them.
        def on_hci_read_voice_setting_command(self, command):
            return hci.HCI_Read_Voice_Setting_ReturnParameters(status=hci.HCI_ErrorCode.SUCCESS, voice_setting=0x0060)

        def on_hci_read_number_of_supported_iac_command(self, command):
            return hci.HCI_Read_Number_Of_Supported_IAC_ReturnParameters(status=hci.HCI_ErrorCode.SUCCESS, num_support_iac=1)

        def on_hci_read_current_iac_lap_command(self, command):
            return hci.HCI_Read_Current_IAC_LAP_ReturnParameters(
                status=hci.HCI_ErrorCode.SUCCESS, num_support_iac=1, iac_lap=bytes([0x33, 0x8B, 0x9E]))  # GIAC

        def on_hci_write_connection_accept_timeout_command(self, command):
            return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)

        # Inquiry (Vol 4 Part E §7.1.1, §7.7.1): Command Status, then Inquiry Complete after
        # Inquiry_Length × 1.28 s; a cancelled inquiry sends no Inquiry Complete (§7.1.2).
        def on_hci_inquiry_command(self, command):
            if getattr(self, "rig_inquiry", None) is not None:
                self._send_hci_command_status(hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR, command.op_code)
                return None
            self._send_hci_command_status(hci.HCI_COMMAND_STATUS_PENDING, command.op_code)
            self.rig_inquiry = _asyncio.get_running_loop().call_later(command.inquiry_length * 1.28, self.rig_inquiry_complete)
            return None

        def rig_inquiry_complete(self) -> None:
            self.rig_inquiry = None
            self.send_hci_packet(hci.HCI_Inquiry_Complete_Event(status=hci.HCI_ErrorCode.SUCCESS))

        def on_hci_inquiry_cancel_command(self, command):
            if (inquiry := getattr(self, "rig_inquiry", None)) is None:
                return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR)
            inquiry.cancel()
            self.rig_inquiry = None
            return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)

        # HCI Reset: forget advertising, scanning and connections (peers see a timeout)
        def on_hci_reset_command(self, command):
            self.rig_forget_state(notify_peers=True)
            return super().on_hci_reset_command(command)

        def rig_forget_state(self, notify_peers: bool) -> None:
            for timer in self.rig_adv_timers.values():
                timer.cancel()
            self.rig_adv_timers.clear()
            self.le_legacy_advertiser.stop()
            for advertising_set in self.advertising_sets.values():
                advertising_set.stop()
            self.advertising_sets.clear()
            self.le_scan_enable = False
            self.pending_le_connection = None
            for peer_address, connection in list(self.le_connections.items()):
                if notify_peers and self.link:
                    try:
                        connection.send_ll_control_pdu(ll.TerminateInd(hci.HCI_ErrorCode.CONNECTION_TIMEOUT_ERROR))
                    except Exception as e:  # peer gone
                        log.debug("reset: cannot notify %s: %s", peer_address, e)
                del self.le_connections[peer_address]

    def summarize(packet) -> str:
        try:
            if isinstance(packet, hci.HCI_Command):
                return f"CMD {packet.name} 0x{packet.op_code:04X} {bytes(packet)[4:].hex()}"
            if isinstance(packet, hci.HCI_Event):
                return f"EVT {packet.name} {bytes(packet)[3:].hex()}"
            if isinstance(packet, hci.HCI_AclDataPacket):
                return (f"ACL h=0x{packet.connection_handle:03X} pb={packet.pb_flag} "
                        f"len={len(packet.data)} {packet.data[:24].hex()}")
        except Exception:  # logging must never break the controller
            pass
        return type(packet).__name__

    return RigController


def build_link_class():
    import asyncio as _asyncio

    from bumble import core
    from bumble.link import LocalLink

    class RigLink(LocalLink):
        """LocalLink whose LE ACL data carries the sender's address *of that connection*.

        Bumble 0.0.236 tags LE ACL data with the sending controller's random address, and the
        receiver looks the connection up by the peer address it connected with. The kernel
        connects with its public address (no privacy), so every LE ACL packet was dropped
        ("!!! no connection for 00:00:00:00:00:00") and L2CAP never got past its first signal.
        """

        def send_acl_data(self, sender_controller, destination_address, transport, data):
            if transport != core.PhysicalTransport.LE:
                return super().send_acl_data(sender_controller, destination_address, transport, data)
            connection = sender_controller.le_connections.get(destination_address)
            if connection is None:
                log.warning("%s: LE ACL data for %s without a connection", sender_controller.name, destination_address)
                return
            source_address = connection.self_address
            for c in self.controllers:
                if c is sender_controller:
                    continue
                peer = c.le_connections.get(source_address)
                if peer is not None and peer.self_address == destination_address:
                    _asyncio.get_running_loop().call_soon(
                        c.on_link_acl_data, source_address, transport, data)
                    return
            log.warning("%s: no controller has an LE connection %s -> %s",
                        sender_controller.name, source_address, destination_address)

    return RigLink


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
        self.controller = self.controller_factory(
            f"C{self.index}", host_source=None, host_sink=self, link=self.link,
            public_address=self.address)
        self.controller.index = self.index
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
        if cmd == "failscanoff":
            count = int(words[2]) if len(words) > 2 else 1
            port.controller.rig_fail_scan_disable = count
            return f"ok controller {port.index} fails the next {count} scan-disable command(s)"
        if cmd == "reset":
            port.controller.rig_forget_state(notify_peers=True)
            return f"ok controller {port.index} state reset"
        if cmd == "rssi":
            advertiser = int(words[2])
            if not 0 <= advertiser < len(ports):
                return f"error no controller {advertiser}"
            value = None if words[3] == "off" else int(words[3])
            port.controller.rig_rssi[advertiser] = value
            return f"ok controller {port.index} hears {advertiser} at {words[3]}"
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
    modes = args.le_mode.split(",")
    if any(m not in ("ext", "legacy", "dual", "bumble") for m in modes):
        print(f"bumble_controllers: --le-mode: each mode is ext, legacy, dual or bumble, not {args.le_mode}", file=sys.stderr)
        return 2
    classes = {mode: build_controller_class(mode) for mode in set(modes)}
    if args.log_hci:
        hci_log = logging.getLogger("hci")
        handler = logging.StreamHandler(sys.stderr) if args.log_hci == "-" else logging.FileHandler(args.log_hci, mode="w")
        handler.setFormatter(logging.Formatter("%(relativeCreated)9.0f %(message)s"))
        hci_log.addHandler(handler)
        hci_log.setLevel(logging.INFO)
        hci_log.propagate = False
        for controller_class in classes.values():
            controller_class.hci_logger = hci_log

    link = build_link_class()()
    ports: list[Port] = []
    for i in range(args.count):
        address = f"{args.address_prefix}:{i:02X}"
        factory = classes[modes[min(i, len(modes) - 1)]]  # the last mode repeats
        port = Port(i, factory, link, address, args.host, args.base_port + i if args.base_port else 0)
        await port.start(None if args.base_port else bind_free(args.host))
        ports.append(port)

    control = await serve_control(args.control, ports) if args.control else None
    attackers = []
    if args.attack:
        import bumble_attackers
        kinds = args.attack.split(",")
        if any(k not in bumble_attackers.KINDS for k in kinds):
            print(f"bumble_controllers: --attack: each kind is one of {', '.join(bumble_attackers.KINDS)}, "
                  f"not {args.attack}", file=sys.stderr)
            return 2
        key = bytes.fromhex(args.attack_key) if args.attack_key else None
        attackers = await bumble_attackers.start(link, classes[modes[0]], kinds, args.attack_report, key)
    if args.iphone:
        import bumble_iphone
        attackers.append(await bumble_iphone.start(link, classes[modes[0]], args.iphone, args.iphone_find, ports[0].address))
    if args.android:
        import bumble_android
        attackers.append(await bumble_android.start(link, classes[modes[0]], args.android, args.android_find, ports[0].address,
                                                    args.android_version))

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
    for task in attackers:
        task.cancel()
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
    ap.add_argument("--le-mode", default="ext", metavar="MODE[,MODE...]",
                    help="per controller (the last one repeats): ext (default): claim LE Extended Advertising and the extended "
                         "advertising, scan and create-connection commands, like a BT 5 chip: "
                         "the kernel uses the extended commands. legacy: clear the extended "
                         "advertising feature, like a BT 4.x chip: the kernel uses the legacy "
                         "commands. bumble: Bumble's own claims (the kernel then mixes extended "
                         "advertising with legacy scanning and connection)")
    ap.add_argument("--no-ext-adv", dest="le_mode", action="store_const", const="legacy",
                    help="same as --le-mode legacy")
    ap.add_argument("--control", metavar="PATH", help="Unix socket for fault injection commands")
    ap.add_argument("--ports-file", metavar="FILE", help="also write the ports, space separated, to FILE")
    ap.add_argument("--log-hci", metavar="FILE", help="log every HCI packet (summary) to FILE, '-' for stderr")
    ap.add_argument("--attack", metavar="KIND[,KIND...]",
                    help="one attacker per kind on the same air (bumble_attackers.py): advertReplay, "
                         "handshakeReplay, garbage, connectionFlood")
    ap.add_argument("--attack-report", metavar="FILE", help="the attackers' counts, as JSON, rewritten every second")
    ap.add_argument("--attack-key", metavar="HEX",
                    help="the event key, only to make the handshake message 1 a sniffer of a rig-to-rig link would capture")
    ap.add_argument("--iphone", metavar="REPORT",
                    help="an iPhone's Nearby Interaction app on the same air (bumble_iphone.py); its steps go to REPORT as JSON")
    ap.add_argument("--iphone-find", choices=("ni", "rig"), default="ni",
                    help="what the iPhone connects to: an advert naming the NI service (bluetoothd's), or the rig's peer advert")
    ap.add_argument("--android", metavar="REPORT",
                    help="an Android phone's ranging app on the same air (bumble_android.py); its steps go to REPORT as JSON")
    ap.add_argument("--android-find", choices=("oob", "rig"), default="oob",
                    help="what the Android phone connects to: an advert naming the OOB service (bluetoothd's), or the rig's peer advert")
    ap.add_argument("--android-version", type=int, choices=(1, 2, 3), default=3,
                    help="the ranging OOB spec version the Android phone speaks (default 3)")
    ap.add_argument("-v", "--verbose", action="count", default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING - 10 * min(args.verbose, 2),
                        format="bumble_controllers: %(message)s", stream=sys.stderr)
    if not 1 <= args.count <= 64:
        ap.error("--count must be 1..64")
    return asyncio.run(async_main(args))


if __name__ == "__main__":
    sys.exit(main())
