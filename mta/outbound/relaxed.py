"""An rsa-sha256, relaxed/relaxed DKIM-Signature (RFC 6376), byte for byte dkimpy's, in fewer steps.

What the outbound signer makes for nearly every message. dkimpy 1.1.8's
``DKIM.sign`` with those settings spent most of its time on work whose
result it then discarded or could have skipped (issue 25's third pass,
docs/performance.md):

* it split the whole message into lines with a regular expression and
  joined the body back, to find where the header ends: here the body is a
  slice after the first empty line (the message has CRLF line ends and no
  bare CR or LF, as :func:`signature` requires; anything else goes to dkimpy);
* its relaxed body canonicalization ran two substitutions over every byte,
  one replacing each single space with a single space: here each runs only
  when the body has what it changes (a space or tab before a line end; a
  tab or two spaces in a row), and the first is a strip of each line;
* it canonicalized every header field, with two module-level substitutions
  each, then picked the signed ones: here only the picked ones are
  canonicalized (the field names rfc822_parse accepts hold no white space,
  so the pick is the same), unfolded by removing their CRLFs and compressed
  only where there is something to compress;
* it parsed the PEM private key with its own ASN.1 reader on every call,
  though OpenSSL (``rsa_key``, parsed once per key by the caller) makes
  the signature.

The rest is dkimpy's own functions (``rfc822_parse``, ``select_headers``,
``fold``, ``RE_BTAG``, the canonicalization helpers), called in dkimpy's
order, so the tag list, its folding and the hashed bytes are the same:
tests/mta/test_outbound_signing.py compares the output with ``dkim.sign``'s
on varied messages and verifies it.
"""

from __future__ import annotations

import base64
import hashlib
import re
import time

import dkim
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import Prehashed
from dkim.canonicalization import correct_empty_body, strip_trailing_lines

_HEADER_NAME = b"DKIM-Signature"
# A run of white space that relaxed canonicalization changes: a tab, or two or
# more characters (dkimpy's [\t ]+ also replaces every single space by itself).
_WSP_RUN = re.compile(rb"\t[\t ]*| [\t ]+")


def relaxed_body(body: bytes) -> bytes:
    """RFC 6376 3.4.4 on a body with CRLF line ends: dkimpy's ``Relaxed.canonicalize_body``."""
    if b" \r\n" in body or b"\t\r\n" in body:
        # dkimpy's [\t ]+\r\n -> \r\n: the white space at the end of each line
        # that a CRLF ends (not the last, unended one).
        lines = body.split(b"\r\n")
        last = lines.pop()
        lines = [line.rstrip(b" \t") for line in lines]
        lines.append(last)
        body = b"\r\n".join(lines)
    if b"\t" in body or b"  " in body:
        body = _WSP_RUN.sub(b" ", body)
    return correct_empty_body(strip_trailing_lines(body))  # type: ignore[no-any-return]


def relaxed_headers(fields: list[list[bytes]]) -> list[tuple[bytes, bytes]]:
    """RFC 6376 3.4.2 for fields of a message without bare CR or LF: dkimpy's
    ``Relaxed.canonicalize_headers`` (its unfolding removes CRLFs, the only
    line ends such a message has; white space is compressed only where there
    is a run or a tab to change)."""
    out = []
    for name, value in fields:
        value = value.replace(b"\r\n", b"")
        if b"\t" in value or b"  " in value:
            value = _WSP_RUN.sub(b" ", value)
        out.append((name.lower().rstrip(), value.strip() + b"\r\n"))
    return out


def split(raw: bytes) -> tuple[list[list[bytes]], bytes]:
    """dkimpy's ``rfc822_parse`` for a message whose line ends are all CRLF."""
    if raw.startswith(b"\r\n"):
        return [], raw[2:]
    end = raw.find(b"\r\n\r\n")
    if end == -1:  # no body: dkimpy's parse of the whole is short
        return dkim.rfc822_parse(raw)  # type: ignore[no-any-return]
    headers, _ = dkim.rfc822_parse(raw[: end + 2])
    return headers, raw[end + 4 :]


def signature(
    raw: bytes,
    *,
    domain: bytes,
    selector: bytes,
    rsa_key: rsa.RSAPrivateKey,
    names: tuple[bytes, ...],
) -> bytes:
    """The ``DKIM-Signature: ...`` field (ending CRLF) dkimpy's ``sign`` would make for
    ``raw`` with ``canonicalize=(relaxed, relaxed)``, rsa-sha256, no l= and i=@domain,
    signing those of ``names`` (lower-case field names) that ``raw`` has, in that
    order, and From once more (signer.header_list's choice, from the parse
    made here).

    ``raw`` must have CRLF line ends and no bare CR or LF (the outbound
    signer's always has: mta/lines.py);
    raises dkim.MessageFormatError where dkimpy would."""
    headers, body = split(raw)
    present = {name.lower() for name, _ in headers}
    include = (*(name for name in names if name in present), b"from")
    body_hash = base64.b64encode(hashlib.sha256(relaxed_body(body)).digest())
    fields = [
        (b"v", b"1"),
        (b"a", b"rsa-sha256"),
        (b"c", b"relaxed/relaxed"),
        (b"d", domain),
        (b"i", b"@" + domain),
        (b"q", b"dns/txt"),
        (b"s", selector),
        (b"t", str(int(time.time())).encode("ascii")),
        (b"h", b" : ".join(include)),
        (b"bh", body_hash),
        # dkimpy's placeholder: b= folds onto its own line, so adding the
        # signature does not move the other tags' folding.
        (b"b", b"0" * 60),
    ]
    # From here dkimpy's DKIM.gen_header (the RSA case), the signed header
    # fields canonicalized after they are picked rather than before.
    value = b"; ".join(b"=".join(x) for x in fields)
    value = dkim.fold(value, namelen=len(_HEADER_NAME), linesep=b"\r\n")
    value = dkim.RE_BTAG.sub(b"\\1", value)
    signed = relaxed_headers(dkim.select_headers(headers, include))
    own = relaxed_headers([[_HEADER_NAME, dkim.RE_BTAG.sub(b"\\1", b" " + value)]])
    h = hashlib.sha256()
    for name, field_value in signed:
        h.update(name)
        h.update(b":")
        h.update(field_value)
    for name, field_value in own:  # hashed without its CRLF
        h.update(name)
        h.update(b":")
        h.update(field_value.rstrip())
    sig = rsa_key.sign(h.digest(), padding.PKCS1v15(), Prehashed(hashes.SHA256()))
    fields[-1] = (b"b", base64.b64encode(sig))
    value = b"; ".join(b"=".join(x) for x in fields) + b"\r\n"
    return b"DKIM-Signature: " + dkim.fold(value, namelen=len(_HEADER_NAME), linesep=b"\r\n")
