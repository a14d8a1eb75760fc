"""MAIL FROM: the sender and its declared SIZE."""

from __future__ import annotations

from mta.smtp import replies

MAX_ADDRESS = 320


def sender(address: str) -> str | None:
    """The reverse path ("" for the null sender <>), or None when unusable."""
    if address in ("<>", ""):
        return ""
    if len(address) > MAX_ADDRESS or "@" not in address or any(c in address for c in " <>\r\n"):
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
