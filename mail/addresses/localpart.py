"""Local parts of hosted addresses.

Accepted: an RFC 5321 dot-atom of ASCII letters, digits and ``! # $ % & ' * /
= ? ^ _ ` { | } ~ -``, dots between atoms (none leading, trailing or doubled),
at most 64 octets, stored lower-cased: mailboxes here are case-insensitive,
as at every large provider. Refused on purpose:

* ``+``: the sub-address delimiter (``ann+news@`` is delivered to ``ann@``);
* quoted strings and non-ASCII local parts: many MTAs and clients still
  mishandle them, and an address must work everywhere it is given out.
"""

from __future__ import annotations

import re

MAX_LOCAL_PART = 64
_ATOM = r"[a-z0-9!#$%&'*/=?^_`{|}~-]+"
_DOT_ATOM = re.compile(rf"^{_ATOM}(?:\.{_ATOM})*$")


class InvalidLocalPart(ValueError):
    pass


def normalize_local_part(raw: str) -> str:
    value = raw.strip().lower()
    if not value:
        raise InvalidLocalPart("local_part is required")
    if len(value.encode()) > MAX_LOCAL_PART:
        raise InvalidLocalPart(f"local_part must be at most {MAX_LOCAL_PART} characters")
    if "+" in value:
        raise InvalidLocalPart("local_part cannot contain '+': it is the sub-address delimiter")
    if not value.isascii():
        raise InvalidLocalPart("local_part must be ASCII")
    if not _DOT_ATOM.match(value):
        raise InvalidLocalPart(
            "local_part may hold letters, digits and !#$%&'*/=?^_`{|}~- with single dots"
            " between them"
        )
    return value
