"""Hashing, constant-time comparison and sealing of stored credentials.

Tokens and keys are stored as SHA-256 hex, never in plaintext. Credentials we
must read back (provider secrets, transfer passwords, DKIM private keys) are
sealed with AES-256-GCM under a key derived from SECRET with HKDF, one key per
purpose, so a key for one use can never open another's data.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

SEAL_VERSION = b"v1"
_NONCE_BYTES = 12


def sha256_hex(value: str | bytes) -> str:
    data = value.encode() if isinstance(value, str) else value
    return hashlib.sha256(data).hexdigest()


def constant_time_equals(a: str | bytes, b: str | bytes) -> bool:
    """Compare secrets without leaking, by timing, where they first differ."""
    a_bytes = a.encode() if isinstance(a, str) else a
    b_bytes = b.encode() if isinstance(b, str) else b
    return hmac.compare_digest(a_bytes, b_bytes)


def hmac_sha256_hex(key: str | bytes, message: str | bytes) -> str:
    k = key.encode() if isinstance(key, str) else key
    m = message.encode() if isinstance(message, str) else message
    return hmac.new(k, m, hashlib.sha256).hexdigest()


def derive_key(secret: str, purpose: str, length: int = 32) -> bytes:
    """A key for one purpose, derived from SECRET (HKDF-SHA256)."""
    return HKDF(
        algorithm=hashes.SHA256(),
        length=length,
        salt=b"svc-seal",
        info=purpose.encode(),
    ).derive(secret.encode())


class SealError(Exception):
    """A sealed value could not be opened: wrong key, wrong purpose or tampered."""


class Sealer:
    """AES-GCM sealing for one purpose; the purpose is also bound as associated data."""

    def __init__(self, secret: str, purpose: str) -> None:
        self._aead = AESGCM(derive_key(secret, f"seal:{purpose}"))
        self._aad = purpose.encode()

    def seal(self, plaintext: str | bytes) -> str:
        data = plaintext.encode() if isinstance(plaintext, str) else plaintext
        nonce = os.urandom(_NONCE_BYTES)
        sealed = self._aead.encrypt(nonce, data, self._aad)
        return (SEAL_VERSION + b"." + base64.urlsafe_b64encode(nonce + sealed)).decode()

    def open_bytes(self, token: str) -> bytes:
        version, _, body = token.encode().partition(b".")
        if version != SEAL_VERSION or not body:
            raise SealError("not a sealed value")
        try:
            raw = base64.urlsafe_b64decode(body)
            return self._aead.decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], self._aad)
        except (InvalidTag, ValueError) as exc:
            raise SealError("sealed value could not be opened") from exc

    def open(self, token: str) -> str:
        return self.open_bytes(token).decode()
