"""Line endings of a message: CRLF is the only one (RFC 5321 2.3.8, RFC 5322 2.3).

RFC 5321 2.3.8 lets CR and LF appear only together, as the line terminator.
A lone LF ("bare LF", a Unix script's line end) or a lone CR is what SMTP
smuggling (2023) plays on: two servers that disagree on where a line ends
disagree on where a message ends. What each door does with one (docs/mail.md,
"Line endings"):

* inbound (port 25, strangers): refused, ``550 5.5.2``, as Postfix's
  ``smtpd_forbid_bare_newline = reject``: what is stored is what was sent;
* submission (authenticated clients): every line end made CRLF before the
  message is queued, the dot-stuffing after a bare line end undone
  (RFC 6409 8 lets a submission server repair what it is given; Postfix
  treats its trusted clients alike);
* the DKIM signer: signs the message with its line ends made CRLF, the form
  the outbound client (mta/outbound/smtp.py) puts on the wire, so the signature covers
  exactly what the far side receives, whatever the queue holds.
"""

from __future__ import annotations

import re

_LINE_END = re.compile(rb"\r\n|\r|\n")


def bare_line_end(raw: bytes) -> str | None:
    """ "LF" or "CR" when ``raw`` has a line end that is not CRLF, else None."""
    pairs = raw.count(b"\r\n")
    if raw.count(b"\n") != pairs:
        return "LF"
    if raw.count(b"\r") != pairs:
        return "CR"
    return None


def to_crlf(raw: bytes) -> bytes:
    """Every line end (CRLF, LF, CR) as CRLF; unchanged when there is nothing to do."""
    if bare_line_end(raw) is None:
        return raw
    return _LINE_END.sub(b"\r\n", raw)


def repair_submitted(raw: bytes) -> bytes:
    """DATA as a client with bare line ends sent it, made standard mail.

    The protocol layer ends lines, and undoes dot-stuffing, at CRLF only. A
    client that ends its lines with LF also dot-stuffs after LF (Python's
    smtplib does), so a line that starts after a bare line end has its
    leading dot removed too, as Postfix's ``normalize`` reads such a line;
    then every line end becomes CRLF."""
    if bare_line_end(raw) is None:
        return raw
    return to_crlf(_STUFFED_AFTER_BARE.sub(rb"\1", raw))


_STUFFED_AFTER_BARE = re.compile(rb"(\r(?!\n)|(?<!\r)\n)\.")
