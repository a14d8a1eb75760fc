"""A hosted domain's active DKIM key, opened for the outbound signer.

The private keys are sealed at rest (common/crypto.py) under
:data:`SEAL_PURPOSE`; mail/dkim/ seals them when it makes a key, and this
module opens them, only for signing, never for a response or a log.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from common.crypto import Sealer
from common.db import Conn, Prepared

SEAL_PURPOSE = "mail.dkim"


@dataclass(frozen=True)
class SigningKey:
    domain: str
    selector: str
    algorithm: str
    # dkimpy's private key format (mail/dkim/keys.py): for the signer only, never logged.
    private_key: bytes


def key_sealer(secret: str) -> Sealer:
    """The sealer of DKIM private keys at rest, built once per process by the caller."""
    return Sealer(secret, SEAL_PURPOSE)


def open_private_key(sealer: Sealer, sealed: str) -> bytes:
    return sealer.open_bytes(sealed)


# Read for every message the outbound worker signs: planned once per connection.
_SIGNING_KEY = Prepared(
    """
    SELECT k.selector, k.algorithm, k.private_key_sealed
      FROM mail.domains d JOIN mail.dkim_keys k ON k.domain_id = d.id AND k.active
     WHERE d.name = %(name)s
    """
)


async def signing_key(conn: Conn, sealer: Sealer, domain: str) -> SigningKey | None:
    """The active DKIM key of a hosted domain; None for a domain not hosted here."""
    name = domain.strip().lower().rstrip(".")
    row = await _SIGNING_KEY.fetch_one(conn, {"name": name})
    return None if row is None else _opened(sealer, name, row)


def _opened(sealer: Sealer, name: str, row: dict[str, Any]) -> SigningKey:
    return SigningKey(
        domain=name,
        selector=row["selector"],
        algorithm=row["algorithm"],
        private_key=open_private_key(sealer, row["private_key_sealed"]),
    )


# The outbound worker's read for a claim's messages: one statement for all their
# domains, each domain's key through the one-active-key index (the LIMIT keeps
# the lateral read from being turned into a join that scans the keys).
_SIGNING_KEYS = Prepared(
    """
    SELECT d.name, k.selector, k.algorithm, k.private_key_sealed
      FROM mail.domains d
     CROSS JOIN LATERAL (
            SELECT selector, algorithm, private_key_sealed FROM mail.dkim_keys
             WHERE domain_id = d.id AND active LIMIT 1) k
     WHERE d.name = ANY(%(names)s::text[])
    """
)


async def signing_keys(
    conn: Conn, sealer: Sealer, domains: Iterable[str]
) -> dict[str, SigningKey | None]:
    """:func:`signing_key` of each domain (by the name given), with one statement."""
    names = {domain: domain.strip().lower().rstrip(".") for domain in domains}
    if not names:
        return {}
    rows = await _SIGNING_KEYS.fetch_all(conn, {"names": sorted(set(names.values()))})
    found = {row["name"]: _opened(sealer, row["name"], row) for row in rows}
    return {domain: found.get(name) for domain, name in names.items()}
