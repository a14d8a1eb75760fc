"""Who a recipient address is: reads mail.domains and mail.addresses (owned by mail/)."""

from __future__ import annotations

from dataclasses import dataclass

from common.db import Conn, fetch_all, fetch_one

# user+tag@example.com delivers to user@example.com (Postfix recipient_delimiter).
SUBADDRESS_DELIMITER = "+"


@dataclass(frozen=True)
class Mailbox:
    """A hosted address mail can be delivered to."""

    address_id: str
    account_id: str
    email: str
    quota_bytes: int | None
    used_bytes: int
    # Read with the lookup so delivery needs no query for them; None when missing.
    has_filters: bool = True
    inbox_id: str | None = None
    junk_id: str | None = None

    def over_quota(self, incoming: int = 0) -> bool:
        # NULL or 0 quota: unlimited.
        if not self.quota_bytes:
            return False
        return self.used_bytes + incoming > self.quota_bytes or self.used_bytes >= self.quota_bytes


@dataclass(frozen=True)
class Lookup:
    domain_hosted: bool
    mailbox: Mailbox | None


async def lookup(conn: Conn, local_part: str, domain: str) -> Lookup:
    """Resolve ``local_part@domain``: exact, then without +tag, then on the fallback domain."""
    dom = await fetch_one(
        conn,
        "SELECT id, fallback_domain_id FROM mail.domains WHERE name = %s",
        (domain,),
    )
    if dom is None:
        return Lookup(domain_hosted=False, mailbox=None)
    local = local_part.lower()
    locals_ = [local]
    base = local.split(SUBADDRESS_DELIMITER, 1)[0]
    if base and base != local:
        locals_.append(base)
    candidates: list[tuple[str, str]] = [(str(dom["id"]), lp) for lp in locals_]
    if dom["fallback_domain_id"] is not None:
        candidates += [(str(dom["fallback_domain_id"]), lp) for lp in locals_]
    rows = await fetch_all(
        conn,
        """
        SELECT a.id AS address_id, d.account_id, a.local_part, d.name AS domain,
               a.quota_bytes, coalesce(q.used_bytes, 0) AS used_bytes,
               a.domain_id::text AS domain_id,
               EXISTS (SELECT 1 FROM mta.filters f WHERE f.address_id = a.id AND f.enabled)
                   AS has_filters,
               (SELECT m.id FROM mta.mailboxes m WHERE m.address_id = a.id AND m.role = 'inbox')
                   AS inbox_id,
               (SELECT m.id FROM mta.mailboxes m WHERE m.address_id = a.id AND m.role = 'junk')
                   AS junk_id
          FROM mail.addresses a
          JOIN mail.domains d ON d.id = a.domain_id
          LEFT JOIN mta.quota_usage q ON q.address_id = a.id
         WHERE (a.domain_id::text, a.local_part) IN %s
        """,
        (tuple(candidates),),
    )
    by_key = {(r["domain_id"], r["local_part"]): r for r in rows}
    for key in candidates:
        row = by_key.get(key)
        if row is not None:
            return Lookup(
                domain_hosted=True,
                mailbox=Mailbox(
                    address_id=str(row["address_id"]),
                    account_id=str(row["account_id"]),
                    email=f"{row['local_part']}@{row['domain']}",
                    quota_bytes=row["quota_bytes"],
                    used_bytes=int(row["used_bytes"]),
                    has_filters=bool(row["has_filters"]),
                    inbox_id=_str(row["inbox_id"]),
                    junk_id=_str(row["junk_id"]),
                ),
            )
    return Lookup(domain_hosted=True, mailbox=None)


def _str(value: object) -> str | None:
    return None if value is None else str(value)
