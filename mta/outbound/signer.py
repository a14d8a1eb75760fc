"""DKIM signing of outbound mail (RFC 6376; Ed25519 per RFC 8463), with dkimpy.

The key is the From domain's active key, asked of mail/directory/ (once per
claim for the messages the claim brought: :func:`claim_keys`) and unsealed
there. The process that signs keeps each RSA key it has parsed in memory
(:data:`_KEYS`, by domain, selector and key bytes: a rotated key is parsed
on its first message); a key is never logged, written or handed on, except
to the worker's own signing processes (:class:`SigningPool`, over a pipe to
a child process).

An rsa-sha256 signature over a message with CRLF line ends (every one the
worker sends) is :mod:`mta.outbound.relaxed`'s: dkimpy's bytes, in fewer
steps. Otherwise dkimpy canonicalizes, selects and hashes the header fields
and builds the DKIM-Signature field. Its RSA operation is pure Python
(``pow`` on Python integers): 16 to 24 ms per signature with a 2048-bit key, measured, which
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
import collections
import contextlib
import logging
import re
import sys
from email.parser import BytesHeaderParser
from email.policy import compat32
from email.utils import getaddresses
from pathlib import Path
from typing import Any

import dkim
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import Prehashed

from common.crypto import Sealer
from common.db import Conn
from mail import directory
from mta import lines
from mta.outbound import relaxed

log = logging.getLogger(__name__)

# Where a signing child imports this module from, whatever the worker's cwd.
_ROOT = Path(__file__).resolve().parents[2]

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


# A header block of field lines and their continuations only (the email
# package's parser would end the block at any other line), CRLF line ends.
_HEADER_BLOCK = re.compile(rb"(?:[!-9;-~]+:[^\r\n]*\r\n(?:[ \t][^\r\n]*\r\n)*)*")
_FROM_FIELD = re.compile(rb"(?im)^from:")
_ATEXT = rb"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_ADDRESS = _ATEXT + rb"(?:\." + _ATEXT + rb")*@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?)"
# A From field of one unfolded line holding one plain address, bare or after a
# display name of letters, digits, spaces, '_' and '-'.
_PLAIN_FROM = re.compile(
    rb"from:[ \t]*(?:[A-Za-z0-9 _-]*<" + _ADDRESS + rb">|" + _ADDRESS + rb")[ \t]*\r\n(?![ \t])",
    re.IGNORECASE,
)


def from_domain(raw: bytes) -> str | None:
    """The domain of the (first) From address, lower-cased; d= of the signature."""
    # The header block alone: the parser would read the body line by line for nothing.
    head = raw.split(b"\r\n\r\n", 1)[0] if b"\r\n\r\n" in raw else raw.split(b"\n\n", 1)[0]
    # Nearly every message's From is one plain address: read without the parser
    # (what it would find; tests/mta/test_outbound_signing.py compares the two).
    block = head + b"\r\n"
    field = _FROM_FIELD.search(block)
    if field is not None and _HEADER_BLOCK.fullmatch(block):
        plain = _PLAIN_FROM.match(block, field.start())
        if plain is not None:
            return (plain.group(1) or plain.group(2)).decode("ascii").rstrip(".").lower()
    return _parsed_from_domain(head)


def _parsed_from_domain(head: bytes) -> str | None:
    headers = BytesHeaderParser(policy=compat32).parsebytes(head + b"\r\n\r\n", headersonly=True)
    found = getaddresses([str(v) for v in headers.get_all("From") or []])
    for _, address in found:
        if "@" in address:
            return address.rpartition("@")[2].strip().rstrip(".").lower() or None
    return None


_SIGNED_NAMES = tuple(name.encode() for name in SIGNED_HEADERS)


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


# Parsed RSA keys of this process (the worker's, or a signing child's), by
# domain, selector and the key itself: a rotated key (a new selector and key)
# misses and is parsed once; a domain's previous keys age out of the bound.
_KEYS: dict[tuple[str, str, bytes], rsa.RSAPrivateKey] = {}
_KEYS_KEPT = 64


def _rsa_key(key: directory.SigningKey) -> rsa.RSAPrivateKey:
    """``key``'s private key as OpenSSL's, parsed on its first signature only."""
    found = _KEYS.get((key.domain, key.selector, key.private_key))
    if found is not None:
        return found
    # Our own key, sealed at rest: its primes were checked when it was made;
    # checking them again on every load costs 50 ms.
    loaded = serialization.load_pem_private_key(
        key.private_key, None, unsafe_skip_rsa_key_validation=True
    )
    if not isinstance(loaded, rsa.RSAPrivateKey):
        raise dkim.KeyFormatError("the rsa-sha256 key is not an RSA key")
    if len(_KEYS) >= _KEYS_KEPT:
        del _KEYS[next(iter(_KEYS))]  # the oldest
    _KEYS[(key.domain, key.selector, key.private_key)] = loaded
    return loaded


def _sign(raw: bytes, key: directory.SigningKey, *, crlf: bool = False) -> bytes:
    """``raw``'s DKIM-Signature field; ``crlf``: the caller made its line ends CRLF
    (lines.to_crlf), so they are not counted again."""
    if key.algorithm == "rsa-sha256" and (crlf or lines.bare_line_end(raw) is None):
        # Every message the worker signs (prepare() made its line ends CRLF).
        return relaxed.signature(
            raw,
            domain=key.domain.encode(),
            selector=key.selector.encode(),
            rsa_key=_rsa_key(key),
            names=_SIGNED_NAMES,
        )
    signer = _Signer(raw, linesep=b"\r\n")
    if key.algorithm == "rsa-sha256":
        signer.rsa_key = _rsa_key(key)
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

    A signature costs about 0.9 ms of CPU (0.6 of it OpenSSL's RSA, the rest
    canonicalizing and hashing: relaxed.py), during which an event loop moves
    nothing else. With ``processes`` children (OUTBOUND_SIGNING_PROCESSES)
    that work runs beside the loop, and a worker process keeps its own core
    for the sessions and the queue: worth it where a core is idle for them.
    Started on the first RSA signature; 0 (the default: on 2 cores the hop
    cost more than it freed) signs in this process.

    Each child reads length-prefixed requests on its stdin and answers in
    order on its stdout, through the event loop's own pipes: no thread in
    this process. (``concurrent.futures``' process pool, used before, moved
    every request through two threads of this process, its queue feeder and
    its manager: 0.9 ms of this process's CPU per message, measured, about
    what signing in-process costs.) A child that dies fails its pending
    signatures, which are then made here; the next request starts a new one.
    """

    def __init__(self, processes: int) -> None:
        self.processes = processes
        self._children: list[_Child] = []
        self._next = 0
        self._starting = asyncio.Lock()

    async def sign(self, raw: bytes, key: directory.SigningKey) -> bytes:
        """The signature of ``raw``, whose line ends are CRLF (:func:`apply`'s)."""
        if self.processes <= 0 or key.algorithm != "rsa-sha256":
            return _sign(raw, key, crlf=True)  # Ed25519 takes microseconds: not worth a hop
        try:
            child = await self._child()
            return await child.sign(raw, key)
        except _ChildGone:
            # A child died (killed, out of memory): a new one next time, this one here.
            log.warning("a DKIM signing process died; starting a new one")
            return _sign(raw, key, crlf=True)
        except OSError:
            log.exception("no DKIM signing process could start; signing in the worker")
            return _sign(raw, key, crlf=True)

    async def _child(self) -> _Child:
        # Held only while children start: the first signatures all wait for them.
        async with self._starting:
            self._children = [c for c in self._children if c.alive]
            while len(self._children) < self.processes:
                self._children.append(await _Child.start())
        self._next = (self._next + 1) % len(self._children)
        return self._children[self._next]

    async def close(self) -> None:
        children, self._children = self._children, []
        for child in children:
            await child.close()


class _ChildGone(Exception):
    pass


_OK, _DKIM_ERROR, _ERROR = 0, 1, 2


class _Child:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        assert process.stdin is not None and process.stdout is not None
        self.stdin = process.stdin
        self.stdout = process.stdout
        self.pending: collections.deque[asyncio.Future[tuple[int, bytes]]] = collections.deque()
        self.alive = True
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls) -> _Child:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            "from mta.outbound.signer import serve; serve()",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            cwd=_ROOT,
        )
        return cls(process)

    async def sign(self, raw: bytes, key: directory.SigningKey) -> bytes:
        if not self.alive:
            raise _ChildGone
        body = _pack(raw, key)
        answer: asyncio.Future[tuple[int, bytes]] = asyncio.get_running_loop().create_future()
        self.pending.append(answer)
        try:
            self.stdin.write(len(body).to_bytes(4, "big") + body)
            await self.stdin.drain()
        except (ConnectionError, RuntimeError):
            self._gone()  # fails ``answer`` with the others: _ChildGone below
        status, payload = await answer
        if status == _OK:
            return payload
        if status == _DKIM_ERROR:
            raise dkim.DKIMException(payload.decode("utf-8", "replace"))
        raise RuntimeError(f"DKIM signing process: {payload.decode('utf-8', 'replace')}")

    async def _read(self) -> None:
        try:
            while True:
                head = await self.stdout.readexactly(5)
                payload = await self.stdout.readexactly(int.from_bytes(head[1:], "big"))
                answer = self.pending.popleft()
                if not answer.done():
                    answer.set_result((head[0], payload))
        except (asyncio.IncompleteReadError, ConnectionError, IndexError):
            pass
        finally:
            self._gone()

    def _gone(self) -> None:
        self.alive = False
        while self.pending:
            answer = self.pending.popleft()
            if not answer.done():
                answer.set_exception(_ChildGone())
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()

    async def close(self) -> None:
        self.reader.cancel()
        self._gone()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.process.wait(), 5)


def _pack(raw: bytes, key: directory.SigningKey) -> bytes:
    """A request: the lengths of the key's fields and the message, then them."""
    parts = [key.domain.encode(), key.selector.encode(), key.algorithm.encode(), key.private_key]
    parts.append(raw)
    return b"".join(len(p).to_bytes(4, "big") for p in parts) + b"".join(parts)


def _unpack(body: bytes) -> tuple[bytes, directory.SigningKey]:
    sizes = [int.from_bytes(body[i : i + 4], "big") for i in range(0, 20, 4)]
    parts, at = [], 20
    for size in sizes:
        parts.append(body[at : at + size])
        at += size
    domain, selector, algorithm, private_key, raw = parts
    key = directory.SigningKey(domain.decode(), selector.decode(), algorithm.decode(), private_key)
    return raw, key


def serve() -> None:
    """A signing child's loop: a request (length, pickled raw and key) in, an answer
    (status, length, signature or error) out, until stdin closes."""
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    while len(head := source.read(4)) == 4:
        raw, key = _unpack(source.read(int.from_bytes(head, "big")))
        try:
            status, payload = _OK, _sign(raw, key)
        except dkim.DKIMException as exc:
            status, payload = _DKIM_ERROR, str(exc).encode()
        except Exception as exc:  # reported to the worker, which logs it
            status, payload = _ERROR, repr(exc).encode()
        sink.write(bytes([status]) + len(payload).to_bytes(4, "big") + payload)
        sink.flush()


async def claim_keys(
    conn: Conn, sealer: Sealer, raws: dict[str, bytes]
) -> dict[str, directory.SigningKey | None]:
    """Each message's From domain key (None: unsigned), by message id, for the raws a
    claim brought: one statement for all their domains, read in the claim's
    transaction, so a key activated before the claim signs its messages."""
    domains = {message_id: from_domain(raw) for message_id, raw in raws.items()}
    keys = await directory.signing_keys(conn, sealer, {d for d in domains.values() if d})
    return {message_id: keys.get(d) if d else None for message_id, d in domains.items()}


async def prepare(
    conn: Conn, sealer: Sealer, raw: bytes
) -> tuple[bytes, directory.SigningKey | None]:
    """``raw`` with CRLF line ends, and the key of its From domain (None: unsigned).

    Signed as the outbound client sends it: every line end CRLF on the wire
    (mta/outbound/client.py), so a signature over a queued message with bare LFs would cover
    other bytes than the far side receives (mta/lines.py)."""
    raw = lines.to_crlf(raw)
    domain = from_domain(raw)
    if domain is None:
        return raw, None
    return raw, await directory.signing_key(conn, sealer, domain)


async def apply(
    raw: bytes, key: directory.SigningKey | None, pool: SigningPool | None = None
) -> bytes:
    """``raw`` (from :func:`prepare`, or otherwise made CRLF by lines.to_crlf) with its
    DKIM-Signature prepended; no database connection is held while it is computed."""
    if key is None:
        return raw
    try:
        signature = await pool.sign(raw, key) if pool is not None else _sign(raw, key, crlf=True)
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
