#!/usr/bin/env python3
"""A GATT client built from Bumble's ATT codec (bumble.att, bumble.core.UUID), driving our
ATTServer through the Swift test (GATTServerTests/BumbleCrossCheckTests.swift): an independent
implementation builds every request and decodes every answer.

Protocol on stdin/stdout, one line each way per step:
  -> "PDU <hex>"              a PDU for the server
  -> "NOTIFY <uuid> <hex>"    the bridge asks the server to notify a characteristic
  <- a JSON object: {"send": [hex...], "writes": [[uuid, hex, withResponse]...],
                     "subscriptions": [[uuid, bits]...], "refused": text or null}
Runs the GATT procedures of Core Specification Vol 3 Part G §4 (primary service discovery,
by service UUID, characteristic discovery, descriptor discovery, CCCD write, value write and
write without response, a notification), checks what comes back, and exits 0 with "OK" or 1
with the first failure on stderr.
"""
import json
import struct
import sys

from bumble import att
from bumble.core import UUID

PRIMARY_SERVICE = UUID.from_16_bits(0x2800)
CHARACTERISTIC = UUID.from_16_bits(0x2803)
CCCD = UUID.from_16_bits(0x2902)
# The UUIDs (issue 33) and our token service (docs/PROTOCOL.md), written here again.
NI_SERVICE = UUID("2E938FD0-6A61-11ED-A1EB-0242AC120002")
NI_SECURE = UUID("2E93941C-6A61-11ED-A1EB-0242AC120002")
NI_RX = UUID("2E93998A-6A61-11ED-A1EB-0242AC120002")
NI_TX = UUID("2E939AF2-6A61-11ED-A1EB-0242AC120002")
UART_SERVICE = UUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
UART_RX = UUID("6E400002-B5A3-F393-E0A9-E50E24DCCA9E")
UART_TX = UUID("6E400003-B5A3-F393-E0A9-E50E24DCCA9E")
TOKEN_SERVICE = UUID("2ED41668-154D-4053-A64F-10BF69A2A46E")
TOKEN = UUID("DE2765D7-CFF1-4EF1-A826-3165F492577D")


def fail(message):
    print(f"bumble_client: {message}", file=sys.stderr)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


STEPS = 200  # far more than the procedures need: a server that never ends a loop fails


def step(line):
    global STEPS
    STEPS -= 1
    check(STEPS > 0, "too many steps: a discovery procedure does not advance")
    print(line, flush=True)
    answer = sys.stdin.readline()
    if not answer:
        fail("the server side closed the pipe")
    return json.loads(answer)


def request(pdu, allow_error=False):
    """Sends one request; returns the decoded answer (Bumble's class) and the step's report."""
    report = step("PDU " + bytes(pdu).hex())
    check(len(report["send"]) == 1, f"{pdu.name}: expected one answer, got {report['send']}")
    answer = att.ATT_PDU.from_bytes(bytes.fromhex(report["send"][0]))
    if isinstance(answer, att.ATT_Error_Response):
        check(allow_error, f"{pdu.name}: error {answer}")
        check(answer.request_opcode_in_error == pdu.op_code, f"error names opcode {answer.request_opcode_in_error:#x}")
    return answer, report


def discover_services():
    """Part G §4.4.1: Read By Group Type 0x2800 until Attribute Not Found."""
    services, start = [], 0x0001
    while start <= 0xFFFF:
        answer, _ = request(att.ATT_Read_By_Group_Type_Request(
            starting_handle=start, ending_handle=0xFFFF, attribute_group_type=PRIMARY_SERVICE), allow_error=True)
        if isinstance(answer, att.ATT_Error_Response):
            check(answer.error_code == att.ErrorCode.ATTRIBUTE_NOT_FOUND, f"discovery ended with {answer}")
            break
        check(isinstance(answer, att.ATT_Read_By_Group_Type_Response), f"not a group response: {answer}")
        check(answer.attributes, f"an empty group response: {answer}")
        for handle, end, value in answer.attributes:
            check(handle >= start and end >= handle, f"bad group {handle:#x}-{end:#x}")
            services.append((handle, end, UUID.from_bytes(value)))
            start = end + 1
    return services


def discover_by_uuid(uuid):
    """Part G §4.4.2: Find By Type Value 0x2800 with the service UUID."""
    answer, _ = request(att.ATT_Find_By_Type_Value_Request(
        starting_handle=1, ending_handle=0xFFFF, attribute_type=PRIMARY_SERVICE, attribute_value=bytes(uuid)))
    check(isinstance(answer, att.ATT_Find_By_Type_Value_Response), f"not a find-by-type answer: {answer}")
    return answer.handles_information


def discover_characteristics(start, end):
    """Part G §4.6.1: Read By Type 0x2803 over the service's range."""
    found = []
    while start <= end:
        answer, _ = request(att.ATT_Read_By_Type_Request(
            starting_handle=start, ending_handle=end, attribute_type=CHARACTERISTIC), allow_error=True)
        if isinstance(answer, att.ATT_Error_Response):
            check(answer.error_code == att.ErrorCode.ATTRIBUTE_NOT_FOUND, f"characteristic discovery: {answer}")
            break
        check(isinstance(answer, att.ATT_Read_By_Type_Response) and answer.attributes, f"not a read-by-type answer: {answer}")
        for handle, value in answer.attributes:
            properties, value_handle = struct.unpack_from("<BH", value)
            found.append((handle, properties, value_handle, UUID.from_bytes(value[3:])))
            start = handle + 1
    return found


def discover_descriptors(start, end):
    """Part G §4.7.1: Find Information after the value handle."""
    found = []
    while start <= end:
        answer, _ = request(att.ATT_Find_Information_Request(starting_handle=start, ending_handle=end), allow_error=True)
        if isinstance(answer, att.ATT_Error_Response):
            check(answer.error_code == att.ErrorCode.ATTRIBUTE_NOT_FOUND, f"descriptor discovery: {answer}")
            break
        check(isinstance(answer, att.ATT_Find_Information_Response) and answer.information, f"not an information answer: {answer}")
        for handle, uuid in answer.information:
            check(handle >= start, f"handle {handle:#x} before {start:#x}")
            found.append((handle, UUID.from_bytes(uuid)))
            start = handle + 1
    return found


def main():
    services = discover_services()
    check([uuid for _, _, uuid in services] == [NI_SERVICE, UART_SERVICE, TOKEN_SERVICE], f"services: {services}")
    ni_start, ni_end, _ = services[0]
    check(discover_by_uuid(NI_SERVICE) == [(ni_start, ni_end)], "Find By Type Value disagrees with discovery")
    check(discover_by_uuid(UART_SERVICE) == [services[1][:2]], "UART by UUID")

    layout = {}
    for start, end, _ in services:
        characteristics = discover_characteristics(start, end)
        for index, (declaration, properties, value_handle, uuid) in enumerate(characteristics):
            check(value_handle == declaration + 1, f"{uuid}: value handle {value_handle} after {declaration}")
            last = characteristics[index + 1][0] - 1 if index + 1 < len(characteristics) else end
            descriptors = discover_descriptors(value_handle + 1, last) if value_handle < last else []
            layout[uuid] = (properties, value_handle, descriptors)
    expected = {NI_SECURE: 0x02, NI_RX: 0x0C, NI_TX: 0x10, UART_RX: 0x0C, UART_TX: 0x10, TOKEN: 0x08}
    check({uuid: p for uuid, (p, _, _) in layout.items()} == expected, f"properties: {layout}")
    for uuid in (NI_TX, UART_TX):
        _, value_handle, descriptors = layout[uuid]
        check(descriptors == [(value_handle + 1, CCCD)], f"{uuid}: descriptors {descriptors}")
    for uuid in (NI_SECURE, NI_RX, UART_RX, TOKEN):
        check(layout[uuid][2] == [], f"{uuid} has descriptors")

    # A write-only value refuses a read; the secure one wants encryption first.
    answer, _ = request(att.ATT_Read_Request(attribute_handle=layout[NI_RX][1]), allow_error=True)
    check(answer.error_code == att.ErrorCode.READ_NOT_PERMITTED, f"read of RX: {answer}")
    answer, _ = request(att.ATT_Read_Request(attribute_handle=layout[NI_SECURE][1]), allow_error=True)
    check(answer.error_code == att.ErrorCode.INSUFFICIENT_ENCRYPTION, f"read of SEC: {answer}")

    # A notification before the client subscribed is refused.
    tx_handle = layout[NI_TX][1]
    report = step(f"NOTIFY {NI_TX} 02")
    check(report["send"] == [] and report["refused"], f"notified an unsubscribed client: {report}")

    # Part G §4.12.3: the CCCD write; then §4.9.3 / §4.9.1 writes of Apple's initialize (0x0A) and stop.
    cccd = tx_handle + 1
    answer, report = request(att.ATT_Write_Request(attribute_handle=cccd, attribute_value=struct.pack("<H", 1)))
    check(isinstance(answer, att.ATT_Write_Response), f"CCCD write: {answer}")
    check(report["subscriptions"] == [[str(NI_TX), 1]], f"subscription: {report}")
    answer, _ = request(att.ATT_Read_Request(attribute_handle=cccd))
    check(answer.attribute_value == b"\x01\x00", f"CCCD reads {answer}")
    answer, report = request(att.ATT_Write_Request(attribute_handle=layout[NI_RX][1], attribute_value=b"\x0a"))
    check(isinstance(answer, att.ATT_Write_Response), f"write: {answer}")
    check(report["writes"] == [[str(NI_RX), "0a", True]], f"write reached the bridge as {report}")
    report = step("PDU " + bytes(att.ATT_Write_Command(attribute_handle=layout[NI_RX][1], attribute_value=b"\x0c")).hex())
    check(report["send"] == [] and report["writes"] == [[str(NI_RX), "0c", False]], f"write command: {report}")

    # Part G §4.3.1 (Exchange MTU), then a notification as long as an accessory configuration
    # data 2.0 message (1 + 48 octets), more than the default MTU allows.
    answer, _ = request(att.ATT_Exchange_MTU_Request(client_rx_mtu=185))
    check(isinstance(answer, att.ATT_Exchange_MTU_Response) and answer.server_rx_mtu >= 23, f"MTU: {answer}")
    message = bytes([0x01]) + bytes(range(48))
    report = step(f"NOTIFY {NI_TX} {message.hex()}")
    check(len(report["send"]) == 1, f"notification: {report}")
    notification = att.ATT_PDU.from_bytes(bytes.fromhex(report["send"][0]))
    check(isinstance(notification, att.ATT_Handle_Value_Notification), f"not a notification: {notification}")
    check(notification.attribute_handle == tx_handle and notification.attribute_value == message, f"{notification}")

    # An unsupported request (Read Multiple) gets Request Not Supported, handle 0.
    answer, _ = request(att.ATT_Read_Multiple_Request(set_of_handles=[1, 2]), allow_error=True)
    check(answer.error_code == att.ErrorCode.REQUEST_NOT_SUPPORTED and answer.attribute_handle_in_error == 0, f"{answer}")
    print("OK", flush=True)


main()
