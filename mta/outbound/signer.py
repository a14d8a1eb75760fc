"""DKIM signing of outbound mail (RFC 6376; Ed25519 per RFC 8463), with dkimpy.

The key is the From domain's active key, asked of mail/directory.py and
unsealed there for this call only: it lives in this module's frames while the
signature is computed and is never cached, logged or handed on.
"""

from __future__ import annotations

import logging
from email.parser import BytesHeaderParser
from email.policy import compat32
from email.utils import getaddresses

import dkim

from common.crypto import Sealer
from common.db import Conn
from mail import directory

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
    headers = BytesHeaderParser(policy=compat32).parsebytes(raw, headersonly=True)
    found = getaddresses([str(v) for v in headers.get_all("From") or []])
    for _, address in found:
        if "@" in address:
            return address.rpartition("@")[2].strip().rstrip(".").lower() or None
    return None


def header_list(raw: bytes) -> list[bytes]:
    head = raw.split(b"\r\n\r\n", 1)[0].lower()
    present = [
        name
        for name in SIGNED_HEADERS
        if head.startswith(name.encode() + b":") or b"\r\n" + name.encode() + b":" in head
    ]
    return [name.encode() for name in present] + [b"from"]


async def sign(conn: Conn, sealer: Sealer, raw: bytes) -> bytes:
    """``raw`` with a DKIM-Signature prepended; unchanged when its domain has no key."""
    domain = from_domain(raw)
    if domain is None:
        return raw
    key = await directory.signing_key(conn, sealer, domain)
    if key is None:
        return raw
    try:
        signature = dkim.sign(
            raw,
            key.selector.encode(),
            key.domain.encode(),
            key.private_key,
            canonicalize=(b"relaxed", b"relaxed"),
            signature_algorithm=key.algorithm.encode(),
            include_headers=header_list(raw),
        )
    except dkim.DKIMException:
        # Unsigned mail still goes: a receiver may junk it, but losing it is worse.
        log.exception("DKIM signing failed for %s (selector %s)", domain, key.selector)
        return raw
    return signature + raw
