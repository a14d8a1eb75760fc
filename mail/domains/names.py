"""Domain names as operators type them and as DNS and SMTP need them.

A name is accepted in Unicode or ASCII form and stored in its ASCII (IDNA
2008 A-label) form, lower-cased, with no trailing dot: ``Bücher.Example.``
becomes ``xn--bcher-kva.example``. UTS #46 mapping is applied first, the way
browsers and mail clients map what users type.
"""

from __future__ import annotations

import re

import idna

MAX_NAME_LENGTH = 253
MAX_LABEL_LENGTH = 63
_LDH_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$")


class InvalidDomainName(ValueError):
    """The message is written for the operator who typed the name."""


def normalize_domain(raw: str) -> str:
    """The ASCII form of a mail domain, or InvalidDomainName."""
    name = raw.strip()
    if name.endswith("."):
        name = name[:-1]
    if not name:
        raise InvalidDomainName("a domain name is required")
    if len(name) > MAX_NAME_LENGTH * 4:
        raise InvalidDomainName("domain name is too long")
    try:
        ascii_name = idna.encode(name, uts46=True, std3_rules=True).decode("ascii").lower()
    except (idna.IDNAError, UnicodeError) as exc:
        raise InvalidDomainName(f"not a valid domain name: {exc}") from None
    labels = ascii_name.split(".")
    if len(labels) < 2:
        raise InvalidDomainName("a mail domain needs at least two labels (example.com)")
    if len(ascii_name) > MAX_NAME_LENGTH:
        raise InvalidDomainName(f"domain name is longer than {MAX_NAME_LENGTH} characters")
    for label in labels:
        if not label or len(label) > MAX_LABEL_LENGTH or not _LDH_LABEL.match(label):
            raise InvalidDomainName(f"label {label!r} is not a valid host name label")
    if labels[-1].isdigit():
        # Also refuses IPv4 literals (192.0.2.1): a mail domain is a name.
        raise InvalidDomainName("the last label of a domain name cannot be numeric")
    return ascii_name


def unicode_domain(ascii_name: str) -> str:
    """The Unicode form to show people; the ASCII form if it cannot be decoded."""
    try:
        return idna.decode(ascii_name)
    except (idna.IDNAError, UnicodeError):
        return ascii_name


def parent_names(name: str) -> list[str]:
    """``a.b.example.com`` -> the name itself then each parent down to two labels."""
    labels = name.split(".")
    return [".".join(labels[i:]) for i in range(len(labels) - 1)]
