"""MAIL FROM: the sender and its declared SIZE."""

from __future__ import annotations

import re

from mta.smtp import replies

MAX_ADDRESS = 320
# No grammar of RFC 5321 4.1.2 (nor RFC 6531's UTF-8 extension) admits an ASCII
# control character in a path, quoted or not, except through a quoted-pair, which
# a mailbox of ours never needs; and bytes that are not UTF-8 (which aiosmtpd hands
# on as lone surrogates) are no RFC 6531 address. Either is a syntax error (553)
# and never reaches the database, which cannot hold a NUL nor encode a surrogate.
_FORBIDDEN = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")


def has_forbidden_character(address: str) -> bool:
    return _FORBIDDEN.search(address) is not None


def sender(address: str) -> str | None:
    """The reverse path ("" for the null sender <>), or None when unusable."""
    if address in ("<>", ""):
        return ""
    if (
        len(address) > MAX_ADDRESS
        or "@" not in address
        or any(c in address for c in " <>")
        or has_forbidden_character(address)
    ):
        return None
    return address


def declared_size(mail_options: list[str]) -> int | None:
    for option in mail_options:
        name, _, value = option.partition("=")
        if name.upper() == "SIZE" and value.isdigit():
            return int(value)
    return None


def check(address: str, mail_options: list[str], max_size: int) -> tuple[str, str | None, int]:
    """(reply, sender, declared size)."""
    parsed = sender(address)
    if parsed is None:
        return replies.BAD_SENDER_SYNTAX, None, 0
    size = declared_size(mail_options) or 0
    if size > max_size:
        return replies.MESSAGE_TOO_BIG, None, 0
    return replies.SENDER_OK, parsed, size
