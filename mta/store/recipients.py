"""Who a recipient address is: reads mail.domains and mail.addresses (owned by mail/)."""

from __future__ import annotations

from dataclasses import dataclass

from common.db import Conn, Prepared

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


# One round trip per RCPT, planned once per connection: the domain, then the
# address by its unique (domain_id, local_part) key for each candidate in order
# (exact local part, then without the +tag; the domain, then its fallback).
_LOOKUP = Prepared(
    """
    WITH dom AS (
        SELECT id, fallback_domain_id FROM mail.domains WHERE name = %(domain)s
    ), cand AS (
        SELECT dom.id AS domain_id, l.local_part, l.n, 0 AS pref
          FROM dom, unnest(%(locals)s::text[]) WITH ORDINALITY AS l(local_part, n)
        UNION ALL
        SELECT dom.fallback_domain_id, l.local_part, l.n, 1
          FROM dom, unnest(%(locals)s::text[]) WITH ORDINALITY AS l(local_part, n)
         WHERE dom.fallback_domain_id IS NOT NULL
    )
    SELECT EXISTS (SELECT 1 FROM dom) AS hosted, found.*
      FROM (SELECT 1) AS one
      LEFT JOIN LATERAL (
        SELECT a.id AS address_id, d.account_id, a.local_part, d.name AS domain,
               a.quota_bytes, coalesce(q.used_bytes, 0) AS used_bytes,
               EXISTS (SELECT 1 FROM mta.filters f WHERE f.address_id = a.id AND f.enabled)
                   AS has_filters,
               (SELECT m.id FROM mta.mailboxes m WHERE m.address_id = a.id AND m.role = 'inbox')
                   AS inbox_id,
               (SELECT m.id FROM mta.mailboxes m WHERE m.address_id = a.id AND m.role = 'junk')
                   AS junk_id
          FROM cand
          -- LIMIT keeps this a lookup per candidate by the unique key: joined
          -- flat, a plan cached before the table had statistics may hash it.
          CROSS JOIN LATERAL (
            SELECT * FROM mail.addresses x
             WHERE x.domain_id = cand.domain_id AND x.local_part = cand.local_part
             LIMIT 1
          ) AS a
          JOIN mail.domains d ON d.id = a.domain_id
          LEFT JOIN mta.quota_usage q ON q.address_id = a.id
         ORDER BY cand.pref, cand.n
         LIMIT 1
      ) AS found ON true
    """
)


async def lookup(conn: Conn, local_part: str, domain: str) -> Lookup:
    """Resolve ``local_part@domain``: exact, then without +tag, then on the fallback domain."""
    local = local_part.lower()
    locals_ = [local]
    base = local.split(SUBADDRESS_DELIMITER, 1)[0]
    if base and base != local:
        locals_.append(base)
    row = await _LOOKUP.fetch_one(conn, {"domain": domain, "locals": locals_})
    if row is None or not row["hosted"]:
        return Lookup(domain_hosted=False, mailbox=None)
    if row["address_id"] is None:
        return Lookup(domain_hosted=True, mailbox=None)
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


def _str(value: object) -> str | None:
    return None if value is None else str(value)
