"""Who mail can be delivered to: RCPT TO's lookup, and an address's quota.

The recipient statement also reads four mta tables (filters, mailboxes,
quota usage, vacation responses) by address id: one round trip per RCPT
instead of two (three with the vacation check delivery did after the 250). It lives
here, not in mta/store, because its keys, its plan and the rules it encodes
(subaddress, fallback domain) are the directory's, and the directory imports
nothing but common/; the mta columns it names are listed in
docs/architecture.md and allowed by name in tests/test_boundaries.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from common.db import Conn, Prepared
from mail.directory.plans import storage_cap_sql
from mail.directory.storage import account_used_bytes

# user+tag@example.com delivers to user@example.com (Postfix recipient_delimiter).
SUBADDRESS_DELIMITER = "+"


@dataclass(frozen=True)
class Recipient:
    """A hosted address mail can be delivered to."""

    address_id: str
    account_id: str
    email: str
    quota_bytes: int | None
    used_bytes: int
    # Read with the lookup so delivery needs no query for them; None when missing.
    has_filters: bool = True
    # The enabled filters' "id version" in the order they run (version: updated_at
    # in microseconds since the epoch), so delivery runs the scripts it compiled
    # before without reading them again; None when not read.
    filters: tuple[str, ...] | None = None
    inbox_id: str | None = None
    junk_id: str | None = None
    # An enabled vacation response exists (its dates are checked after delivery,
    # mta/vacation.py): without one, delivery reads nothing more for it.
    has_vacation: bool = True

    # The plan's storage_bytes over all of the account's addresses (plans.py);
    # None: unlimited.
    plan_storage_bytes: int | None = None
    account_used_bytes: int = 0

    def over_plan_storage(self, incoming: int = 0) -> bool:
        cap = self.plan_storage_bytes
        if cap is None:
            return False
        return self.account_used_bytes + incoming > cap or self.account_used_bytes >= cap

    def over_quota(self, incoming: int = 0) -> bool:
        # NULL or 0 quota: unlimited.
        if not self.quota_bytes:
            return False
        return self.used_bytes + incoming > self.quota_bytes or self.used_bytes >= self.quota_bytes


@dataclass(frozen=True)
class Lookup:
    domain_hosted: bool
    mailbox: Recipient | None


# The domain, then the address by its unique (domain_id, local_part) key for
# each candidate in order (exact local part, then without the +tag; the
# domain, then its fallback).
_CANDIDATES = """
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
"""

# One round trip per RCPT, planned once per connection.
_LOOKUP = Prepared(
    f"""{_CANDIDATES}
    SELECT EXISTS (SELECT 1 FROM dom) AS hosted, found.*
      FROM (SELECT 1) AS one
      LEFT JOIN LATERAL (
        SELECT a.id AS address_id, d.account_id, a.local_part, d.name AS domain,
               a.quota_bytes, coalesce(q.used_bytes, 0) AS used_bytes,
               (SELECT array_agg(f.id::text || ' '
                                 || (extract(epoch FROM f.updated_at) * 1000000)::bigint
                                 ORDER BY f.position, f.created_at, f.id)
                  FROM mta.filters f WHERE f.address_id = a.id AND f.enabled) AS filters,
               (SELECT m.id FROM mta.mailboxes m WHERE m.address_id = a.id AND m.role = 'inbox')
                   AS inbox_id,
               (SELECT m.id FROM mta.mailboxes m WHERE m.address_id = a.id AND m.role = 'junk')
                   AS junk_id,
               EXISTS (SELECT 1 FROM mta.vacation_responses v
                        WHERE v.address_id = a.id AND v.is_enabled) AS has_vacation,
               {storage_cap_sql("d.account_id")} AS plan_storage_bytes
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


async def lookup_recipient(conn: Conn, local_part: str, domain: str) -> Lookup:
    """Resolve ``local_part@domain``: exact, then without +tag, then on the fallback domain."""
    row = await _LOOKUP.fetch_one(conn, {"domain": domain, "locals": _candidates(local_part)})
    if row is None or not row["hosted"]:
        return Lookup(domain_hosted=False, mailbox=None)
    if row["address_id"] is None:
        return Lookup(domain_hosted=True, mailbox=None)
    return Lookup(
        domain_hosted=True,
        mailbox=Recipient(
            address_id=str(row["address_id"]),
            account_id=str(row["account_id"]),
            email=f"{row['local_part']}@{row['domain']}",
            quota_bytes=row["quota_bytes"],
            used_bytes=int(row["used_bytes"]),
            has_filters=bool(row["filters"]),
            filters=tuple(row["filters"] or ()),
            inbox_id=_str(row["inbox_id"]),
            junk_id=_str(row["junk_id"]),
            has_vacation=bool(row["has_vacation"]),
            plan_storage_bytes=row["plan_storage_bytes"],
            # Summed (a second statement) only under a plan that limits storage.
            account_used_bytes=0
            if row["plan_storage_bytes"] is None
            else await account_used_bytes(conn, str(row["account_id"])),
        ),
    )


def _candidates(local_part: str) -> list[str]:
    local = local_part.lower()
    base = local.split(SUBADDRESS_DELIMITER, 1)[0]
    return [local, base] if base and base != local else [local]


_ADDRESS_ID = Prepared(
    f"""{_CANDIDATES}
    SELECT a.id::text AS address_id
      FROM cand
      CROSS JOIN LATERAL (
        SELECT x.id FROM mail.addresses x
         WHERE x.domain_id = cand.domain_id AND x.local_part = cand.local_part
         LIMIT 1
      ) AS a
     ORDER BY cand.pref, cand.n
     LIMIT 1
    """
)


async def address_id_of(conn: Conn, local_part: str, domain: str) -> str | None:
    """The hosted address ``local_part@domain`` delivers to (the rules of
    :func:`lookup_recipient`), without its quota, folders and plan: who sends."""
    row = await _ADDRESS_ID.fetch_one(conn, {"domain": domain, "locals": _candidates(local_part)})
    return None if row is None else str(row["address_id"])


def _str(value: object) -> str | None:
    return None if value is None else str(value)


_QUOTA = Prepared(
    f"""
    SELECT a.quota_bytes, coalesce(q.used_bytes, 0) AS used_bytes, d.account_id,
           {storage_cap_sql("d.account_id")} AS plan_storage_bytes
      FROM mail.addresses a
      JOIN mail.domains d ON d.id = a.domain_id
      LEFT JOIN mta.quota_usage q ON q.address_id = a.id
     WHERE a.id = %(address_id)s
    """
)


async def address_quota(conn: Conn, address_id: str) -> tuple[int | None, int]:
    """(quota in bytes or None for unlimited, bytes used) of one hosted address.

    JMAP's Email/set create and Email/import answer overQuota past it
    (RFC 8621 4.6, 4.8), as delivery refuses mail to a full mailbox. The
    quota is the tighter of the address's own and what the account's plan
    (``storage_bytes`` over all its addresses) leaves it, so every way mail
    is written in sees the same limit delivery does.
    """
    row = await _QUOTA.fetch_one(conn, {"address_id": address_id})
    if row is None:
        return None, 0
    used = int(row["used_bytes"])
    quota: int | None = row["quota_bytes"] or None
    if row["plan_storage_bytes"] is not None:
        room = int(row["plan_storage_bytes"]) - await account_used_bytes(
            conn, str(row["account_id"])
        )
        quota = used + max(room, 0) if quota is None else min(quota, used + max(room, 0))
    return quota, used
