"""DKIM key pairs in the formats dkimpy signs with and DNS publishes.

* ``rsa-sha256`` (RFC 6376): RSA 2048. The private key is PKCS#1 PEM, which
  ``dkim.sign`` reads; ``p=`` is the base64 SubjectPublicKeyInfo DER.
* ``ed25519-sha256`` (RFC 8463): the private key is the base64 of the 32-byte
  seed, which is what ``dkim.sign`` expects for ed25519; ``p=`` is the base64
  of the raw 32-byte public key (RFC 8463 section 4.2).

Private keys leave this module only sealed (:class:`common.crypto.Sealer`,
purpose ``mail.dkim``) on their way into ``mail.dkim_keys``.
"""

from __future__ import annotations

import asyncio
import base64
import secrets
from dataclasses import dataclass
from datetime import datetime

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

from common.crypto import Sealer
from mail.directory.keys import key_sealer

RSA = "rsa-sha256"
ED25519 = "ed25519-sha256"
ALGORITHMS = (RSA, ED25519)
RSA_BITS = 2048


@dataclass(frozen=True)
class KeyPair:
    algorithm: str
    # dkimpy's private key format (see the module docstring); never in a response.
    private_key: bytes
    public_key_b64: str


def generate_sync(algorithm: str) -> KeyPair:
    if algorithm == RSA:
        key = rsa.generate_private_key(public_exponent=65537, key_size=RSA_BITS)
        private = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
        public = key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return KeyPair(RSA, private, base64.b64encode(public).decode())
    if algorithm == ED25519:
        ed_key = ed25519.Ed25519PrivateKey.generate()
        seed = ed_key.private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )
        raw_public = ed_key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        return KeyPair(ED25519, base64.b64encode(seed), base64.b64encode(raw_public).decode())
    raise ValueError(f"unknown DKIM algorithm {algorithm!r}")


async def generate(algorithm: str) -> KeyPair:
    # RSA generation takes tens of milliseconds: keep it off the event loop.
    return await asyncio.get_running_loop().run_in_executor(None, generate_sync, algorithm)


def key_type(algorithm: str) -> str:
    """The ``k=`` tag of the DNS record."""
    return "ed25519" if algorithm == ED25519 else "rsa"


def record_value(algorithm: str, public_key_b64: str) -> str:
    """The TXT record published at ``<selector>._domainkey.<domain>``."""
    return f"v=DKIM1; k={key_type(algorithm)}; p={public_key_b64}"


def new_selector(algorithm: str, now: datetime) -> str:
    """``rsa20261122a1b2``: sortable by date, says its algorithm, unique per domain."""
    prefix = "ed" if algorithm == ED25519 else "rsa"
    return f"{prefix}{now:%Y%m%d}{secrets.token_hex(2)}"


def seal_private_key(sealer: Sealer, pair: KeyPair) -> str:
    return sealer.seal(pair.private_key)


def dkim_sealer(secret: str) -> Sealer:
    return key_sealer(secret)
