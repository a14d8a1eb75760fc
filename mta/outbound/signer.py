"""DKIM signing of outbound mail (RFC 6376; Ed25519 per RFC 8463), with dkimpy.

The key is the From domain's active key, asked of mail/directory/ and
unsealed there for this call only: it lives in this module's frames while the
signature is computed and is never cached, logged or handed on, except to
the worker's own signing processes (:class:`SigningPool`, over a pipe to a
child process, for this one signature).

dkimpy canonicalizes, selects and hashes the header fields and builds the
DKIM-Signature field. Its RSA operation is pure Python (``pow`` on Python
integers): 16 to 24 ms per signature with a 2048-bit key, measured, which
capped a worker at about 40 messages a second. :class:`_Signer` keeps all
of dkimpy's work but the private-key operation, which it hands to
``cryptography`` (OpenSSL, 0.75 ms): the same PKCS#1 v1.5 signature over the
same SHA-256 digest, byte for byte. Ed25519 is dkimpy's own (PyNaCl).
``gen_header`` is the method of dkimpy 1.1.8 with that one call changed;
tests/mta/test_outbound_delivery.py pins the version, compares the result
with dkimpy's own signature and verifies both kinds with another implementation.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from email.parser import BytesHeaderParser
from email.policy import compat32
from email.utils import getaddresses
from typing import Any

import dkim
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import Prehashed

from common.crypto import Sealer
from common.db import Conn
from mail import directory
from mta import lines

log = logging.getLogger(__name__)

# The fields signed when present (what Gmail and Fastmail sign), in order; From
# is signed once more than it appears ("oversigned"), so a second From added
# in transit breaks the signature instead of being shown to the reader.
SIGNED_HEADERS = (
    "from",
    "to",
    "cc",
    "subject",
    "date",
    "message-id",
    "mime-version",
    "content-type",
    "content-transfer-encoding",
    "reply-to",
    "in-reply-to",
    "references",
)


def from_domain(raw: bytes) -> str | None:
    """The domain of the (first) From address, lower-cased; d= of the signature."""
    # The header block alone: the parser would read the body line by line for nothing.
    head = raw.split(b"\r\n\r\n", 1)[0] if b"\r\n\r\n" in raw else raw.split(b"\n\n", 1)[0]
    headers = BytesHeaderParser(policy=compat32).parsebytes(head + b"\r\n\r\n", headersonly=True)
    found = getaddresses([str(v) for v in headers.get_all("From") or []])
    for _, address in found:
        if "@" in address:
            return address.rpartition("@")[2].strip().rstrip(".").lower() or None
    return None


def header_list(raw: bytes) -> list[bytes]:
    """The SIGNED_HEADERS present in ``raw``'s header block (any line ends), From once more."""
    head = lines.to_crlf(raw).split(b"\r\n\r\n", 1)[0]
    names = {
        line.split(b":", 1)[0].strip().lower()
        for line in head.split(b"\r\n")
        if line[:1] not in (b" ", b"\t", b"") and b":" in line  # not a folded continuation
    }
    return [name.encode() for name in SIGNED_HEADERS if name.encode() in names] + [b"from"]


class _Signer(dkim.DKIM):  # type: ignore[misc]
    """dkimpy's signer with the RSA private-key operation done by OpenSSL."""

    rsa_key: rsa.RSAPrivateKey | None = None

    def gen_header(
        self,
        fields: list[tuple[bytes, bytes]],
        include_headers: list[bytes],
        canon_policy: Any,
        header_name: bytes,
        pk: Any,
        standardize: bool = False,
    ) -> bytes:
        if self.rsa_key is None or self.signature_algorithm != b"rsa-sha256" or standardize:
            return super().gen_header(  # type: ignore[no-any-return]
                fields, include_headers, canon_policy, header_name, pk, standardize
            )
        header_value = b"; ".join(b"=".join(x) for x in fields)
        header_value = dkim.fold(header_value, namelen=len(header_name), linesep=b"\r\n")
        header_value = dkim.RE_BTAG.sub(b"\\1", header_value)
        header = (header_name, b" " + header_value)
        h = dkim.HashThrough(self.hasher(), self.debug_content)
        headers = canon_policy.canonicalize_headers(self.headers)
        self.signed_headers = dkim.hash_headers(
            h, canon_policy, headers, include_headers, header, dict(fields)
        )
        signature = self.rsa_key.sign(h.digest(), padding.PKCS1v15(), Prehashed(hashes.SHA256()))
        index = next(i for i in range(len(fields)) if fields[i][0] == b"b")
        fields[index] = (b"b", base64.b64encode(signature))
        header_value = b"; ".join(b"=".join(x) for x in fields) + self.linesep
        return dkim.fold(header_value, namelen=len(header_name), linesep=self.linesep)  # type: ignore[no-any-return]


def _sign(raw: bytes, key: directory.SigningKey) -> bytes:
    signer = _Signer(raw, linesep=b"\r\n")
    if key.algorithm == "rsa-sha256":
        # Our own key, sealed at rest: its primes were checked when it was made;
        # checking them again on every load costs 50 ms.
        loaded = serialization.load_pem_private_key(
            key.private_key, None, unsafe_skip_rsa_key_validation=True
        )
        assert isinstance(loaded, rsa.RSAPrivateKey)
        signer.rsa_key = loaded
    return signer.sign(  # type: ignore[no-any-return]
        key.selector.encode(),
        key.domain.encode(),
        key.private_key,
        canonicalize=(b"relaxed", b"relaxed"),
        signature_algorithm=key.algorithm.encode(),
        include_headers=header_list(raw),
    )


class SigningPool:
    """RSA signatures computed in child processes, off the worker's event loop.

    dkimpy canonicalizes and hashes in Python: about a third of a worker's CPU
    per message, during which its event loop moved nothing else. With
    ``processes`` children (OUTBOUND_SIGNING_PROCESSES) that work runs beside
    the loop, and a worker process keeps its own core for the sessions and
    the queue. Started on the first RSA signature; 0 signs in this process.
    """

    def __init__(self, processes: int) -> None:
        self.processes = processes
        self._executor: ProcessPoolExecutor | None = None

    async def sign(self, raw: bytes, key: directory.SigningKey) -> bytes:
        if self.processes <= 0 or key.algorithm != "rsa-sha256":
            return _sign(raw, key)  # Ed25519 takes microseconds: not worth a hop
        if self._executor is None:
            # spawn: a fork of a process with an event loop and open sockets is unsafe.
            self._executor = ProcessPoolExecutor(
                self.processes, mp_context=multiprocessing.get_context("spawn")
            )
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, _sign, raw, key)
        except BrokenProcessPool:
            # A child died (killed, out of memory): a new pool next time, this one here.
            log.warning("a DKIM signing process died; starting new ones")
            self.close()
            return _sign(raw, key)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None


async def prepare(
    conn: Conn, sealer: Sealer, raw: bytes
) -> tuple[bytes, directory.SigningKey | None]:
    """``raw`` with CRLF line ends, and the key of its From domain (None: unsigned).

    Signed as the outbound client sends it: aiosmtplib makes every line end CRLF
    on the wire, so a signature over a queued message with bare LFs would cover
    other bytes than the far side receives (mta/lines.py)."""
    raw = lines.to_crlf(raw)
    domain = from_domain(raw)
    if domain is None:
        return raw, None
    return raw, await directory.signing_key(conn, sealer, domain)


async def apply(
    raw: bytes, key: directory.SigningKey | None, pool: SigningPool | None = None
) -> bytes:
    """``raw`` (from :func:`prepare`) with its DKIM-Signature prepended; no database
    connection is held while it is computed."""
    if key is None:
        return raw
    try:
        signature = await pool.sign(raw, key) if pool is not None else _sign(raw, key)
    except dkim.DKIMException:
        # Unsigned mail still goes: a receiver may junk it, but losing it is worse.
        log.exception("DKIM signing failed for %s (selector %s)", key.domain, key.selector)
        return raw
    return signature + raw


async def sign(conn: Conn, sealer: Sealer, raw: bytes) -> bytes:
    """``raw`` with CRLF line ends and a DKIM-Signature prepended; unchanged when its
    domain has no key (:func:`prepare` then :func:`apply`, in this process)."""
    raw, key = await prepare(conn, sealer, raw)
    return await apply(raw, key)
