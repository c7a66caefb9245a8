#!/usr/bin/env python3
"""Peer protocol v2 test vectors from implementations outside this project's Swift code.

The handshake runs through `noiseprotocol` (PyPI: an independent implementation of the Noise
Protocol Framework on top of `cryptography`); everything else (key schedule, private advert,
sealed frames, ranging keys) is computed here with `cryptography`'s HKDF, HMAC and
ChaCha20-Poly1305, from the layouts in docs/PROTOCOL.md only. The Swift tests
(PeerSecurityTests) must reproduce every byte; scripts/test regenerates this file and compares.

Usage: make-vectors.py [OUT.json]   (default: stdout)
"""
import hashlib
import hmac
import json
import struct
import sys
import warnings

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from noise.connection import Keypair, NoiseConnection

# noiseprotocol warns that fixed ephemeral keys are for tests only: that is what they are here.
warnings.filterwarnings("ignore", message="One of ephemeral keypairs")

GROUP_KEY = bytes(range(0x20, 0x40))
INITIATOR_EPHEMERAL = bytes(range(0x40, 0x60))
RESPONDER_EPHEMERAL = bytes(range(0x60, 0x80))
PROLOGUE = b"nearby-bridge peer protocol v2"
SALT = b"nearby-bridge v2"


def hkdf(ikm, info, length, salt=SALT):
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=salt, info=info).derive(ikm)


def hexs(b):
    return b.hex()


def schedule():
    return {
        "fingerprint": hexs(hkdf(GROUP_KEY, b"fingerprint", 4)),
        "handshake_psk": hexs(hkdf(GROUP_KEY, b"handshake psk", 32)),
        "advert_keys": hexs(hkdf(GROUP_KEY, b"advert", 64)),
    }


def resolvable_private_address(irk, prand):
    """Core Spec Vol 6 Part B 1.3.2.2 and Vol 3 Part H 2.2.2: hash = the low 24 bits of
    AES-128(irk, 13 zero octets || prand), numbers most significant octet first; on the air the
    address is least significant octet first, hash then prand."""
    encryptor = Cipher(algorithms.AES(irk), modes.ECB()).encryptor()
    block = encryptor.update(bytes(13) + prand.to_bytes(3, "big")) + encryptor.finalize()
    return (prand.to_bytes(3, "big") + block[13:16])[::-1]


def handshake(psk):
    name = b"Noise_NNpsk0_25519_ChaChaPoly_SHA256"
    initiator = NoiseConnection.from_name(name)
    responder = NoiseConnection.from_name(name)
    initiator.set_as_initiator()
    responder.set_as_responder()
    for side, ephemeral in ((initiator, INITIATOR_EPHEMERAL), (responder, RESPONDER_EPHEMERAL)):
        side.set_psks(psk=psk)
        side.set_prologue(PROLOGUE)
        side.set_keypair_from_private_bytes(Keypair.EPHEMERAL, ephemeral)
        side.start_handshake()
    message1 = initiator.write_message(b"")
    responder.read_message(message1)
    message2 = responder.write_message(b"")
    initiator.read_message(message2)
    assert initiator.handshake_finished and responder.handshake_finished
    h = initiator.get_handshake_hash()
    assert h == responder.get_handshake_hash()
    i2r = initiator.noise_protocol.cipher_state_encrypt.k
    r2i = initiator.noise_protocol.cipher_state_decrypt.k
    assert i2r == responder.noise_protocol.cipher_state_decrypt.k
    return message1, message2, h, i2r, r2i


def frame(version, kind, payload):
    return bytes([version, kind]) + struct.pack("<H", len(payload)) + payload


def sealed(key, sequence, inner):
    box_size = len(inner) + 16
    header = bytes([2, 0x12]) + struct.pack("<H", 8 + box_size) + struct.pack("<Q", sequence)
    nonce = b"\0\0\0\0" + struct.pack("<Q", sequence)
    return header + ChaCha20Poly1305(key).encrypt(nonce, inner, header)


def private_advert(advert_keys, nonce, peer_id, uwb_address, capabilities, psm):
    encryption, authentication = advert_keys[:32], advert_keys[32:]
    body = struct.pack("<QHBB", peer_id, uwb_address, capabilities, psm)
    stream = hmac.new(encryption, nonce, hashlib.sha256).digest()[:12]
    ciphertext = bytes(a ^ b for a, b in zip(body, stream))
    header = b"NB\x02"
    tag = hmac.new(authentication, header + nonce + ciphertext, hashlib.sha256).digest()[:4]
    data = b"\xff" + struct.pack("<H", 0xFFFF) + header + nonce + ciphertext + tag
    return bytes([2, 1, 6, len(data)]) + data


def main():
    keys = schedule()
    psk = bytes.fromhex(keys["handshake_psk"])
    message1, message2, h, i2r, r2i = handshake(psk)
    ranging_secret = hkdf(i2r + r2i, b"nearby-bridge v2 ranging", 32, salt=h)
    session_id = 0x12345678
    sts = hkdf(ranging_secret, b"nearby-bridge v2 sts" + struct.pack("<I", session_id), 24, salt=None)

    name = "Pi \u00e9tage".encode()
    # a controller's hello: one-to-many controlee (bit 0), provisioned STS (bit 1), round hopping (bit 2)
    hello = frame(2, 1, struct.pack("<QBB", 0x0102030405060708, 0b11, 0b111) + bytes([len(name)]) + name)
    parameters = frame(2, 2, struct.pack("<IBBHHHB", session_id, 9, 10, 0x0A01, 0x0B02, 200, 0))
    shared = frame(2, 2, struct.pack("<IBBHHHB", session_id, 9, 10, 0x0A01, 0x0B02, 200, 4) + struct.pack("<H", 0xBEEF) + bytes(range(1, 7)))
    card_json = b'{"name":"Alice"}'
    card = frame(2, 4, struct.pack("<IH", 7, len(card_json)) + card_json)
    frames = [
        {"what": "hello", "direction": "i2r", "sequence": 0, "inner": hexs(hello), "sealed": hexs(sealed(i2r, 0, hello))},
        {"what": "rangingParameters", "direction": "i2r", "sequence": 1, "inner": hexs(parameters), "sealed": hexs(sealed(i2r, 1, parameters))},
        {"what": "rangingParameters one-to-many", "direction": "i2r", "sequence": 2, "inner": hexs(shared), "sealed": hexs(sealed(i2r, 2, shared))},
        {"what": "card", "direction": "r2i", "sequence": 0, "inner": hexs(card), "sealed": hexs(sealed(r2i, 0, card))},
        {"what": "goodbye", "direction": "r2i", "sequence": 5, "inner": hexs(frame(2, 6, b"")), "sealed": hexs(sealed(r2i, 5, frame(2, 6, b"")))},
    ]
    advert_keys = bytes.fromhex(keys["advert_keys"])
    advert = {
        "nonce": "0102030405", "peer_id": "0102030405060708", "uwb_address": 0x0B02, "capabilities": 0b100101, "psm": 0x85,
    }
    advert["data"] = hexs(private_advert(advert_keys, bytes.fromhex(advert["nonce"]), 0x0102030405060708, 0x0B02, 0b100101, 0x85))

    irk_peer = 0x0102030405060708
    irk = hkdf(GROUP_KEY, b"irk" + struct.pack("<Q", irk_peer), 16)
    irk_section = {
        "peer_id": "%016x" % irk_peer, "irk": hexs(irk), "prand": "4a1b2c",
        "address": hexs(resolvable_private_address(irk, 0x4A1B2C)),
    }

    vectors = {
        "source": "Tests/PeerSecurityTests/make-vectors.py (noiseprotocol + cryptography)",
        "group_key": hexs(GROUP_KEY),
        "key_schedule": keys,
        "handshake": {
            "protocol": "Noise_NNpsk0_25519_ChaChaPoly_SHA256",
            "prologue": hexs(PROLOGUE),
            "initiator_ephemeral": hexs(INITIATOR_EPHEMERAL),
            "responder_ephemeral": hexs(RESPONDER_EPHEMERAL),
            "message1": hexs(message1),
            "message2": hexs(message2),
            "frame1": hexs(frame(2, 0x10, message1)),
            "frame2": hexs(frame(2, 0x11, message2)),
            "handshake_hash": hexs(h),
            "initiator_to_responder": hexs(i2r),
            "responder_to_initiator": hexs(r2i),
            "ranging_secret": hexs(ranging_secret),
        },
        "ranging_keys": {"session_id": session_id, "vendor_id": struct.unpack("<H", sts[:2])[0] or 1, "static_sts_iv": hexs(sts[2:8]), "session_key": hexs(sts[8:24])},
        "frames": frames,
        "private_advert": advert,
        "identity_resolving_key": irk_section,
    }
    text = json.dumps(vectors, indent=2) + "\n"
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as out:
            out.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
