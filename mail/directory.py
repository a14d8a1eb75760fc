"""The directory: what mta may know of mail's accounts, domains, addresses and keys.

mail owns accounts, domains, addresses, their credentials and the DKIM keys
(schema ``mail``); mta (the SMTP daemon now, submission and JMAP next) reads
them only through the functions here, never with SQL of its own. This is the
one module of mail/ that mta/ imports (docs/architecture.md, "mail/ and mta/";
tests/test_boundaries.py holds it), the way Stalwart's directory crate stands
between its protocol servers and the account data.

* :func:`lookup_recipient`: RCPT TO, once per recipient on the hot path.
* :func:`authenticate`: an address and its password (SMTP AUTH, JMAP next).
* :func:`signing_key`: a hosted domain's active DKIM key (signing outbound mail).
* :func:`reserve_sends`: the plan's sends_per_month, asked by submission
  before it queues a message (mail/billing/entitlement.py decides).

The recipient statement also reads three mta tables (filters, mailboxes,
quota usage) by address id: one round trip per RCPT instead of two. It lives
here, not in mta, because its keys, its plan and the rules it encodes
(subaddress, fallback domain) are the directory's; the mta columns it names
are listed in docs/architecture.md as the one place mail's SQL reads mta's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from common.crypto import Sealer
from common.db import Conn, Prepared
from common.passwords import verify_password
from mail.addresses import store as addresses_store
from mail.dkim import store as keys_store
from mail.dkim.keys import dkim_sealer, open_private_key
from mail.domains import store as domains_store
from mail.errors import MailError

__all__ = [
    "SUBADDRESS_DELIMITER",
    "Lookup",
    "Mailbox",
    "Principal",
    "SigningKey",
    "account_addresses",
    "account_used_bytes",
    "address_quota",
    "authenticate",
    "key_sealer",
    "lookup_recipient",
    "push_allowed",
    "reserve_sends",
    "return_sends",
    "signing_key",
]

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

    # The plan's storage_bytes over all of the account's addresses (mail/billing/);
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
                   AS junk_id,
               pl.cap AS plan_storage_bytes
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
          -- The account's plan (mail.plan_of: its subscription's, else the default).
          LEFT JOIN LATERAL (
            SELECT (p.limits ->> 'storage_bytes')::bigint AS cap
              FROM mail.plans p WHERE p.id = mail.plan_of(d.account_id)
          ) AS pl ON true
         ORDER BY cand.pref, cand.n
         LIMIT 1
      ) AS found ON true
    """
)


async def lookup_recipient(conn: Conn, local_part: str, domain: str) -> Lookup:
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
            plan_storage_bytes=row["plan_storage_bytes"],
            # Summed (a second statement) only under a plan that limits storage.
            account_used_bytes=0
            if row["plan_storage_bytes"] is None
            else await account_used_bytes(conn, str(row["account_id"])),
        ),
    )


_ACCOUNT_USED = Prepared(
    """
    SELECT coalesce(sum(q.used_bytes), 0) AS used
      FROM mail.domains d
      JOIN mail.addresses a ON a.domain_id = d.id
      JOIN mta.quota_usage q ON q.address_id = a.id
     WHERE d.account_id = %(account)s
    """
)


async def account_used_bytes(conn: Conn, account_id: str) -> int:
    """Bytes stored over all of an account's addresses: the plan's storage_bytes usage."""
    row = await _ACCOUNT_USED.fetch_one(conn, {"account": account_id})
    return int(row["used"]) if row else 0


def _str(value: object) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True)
class Principal:
    """An address that proved its password: who submits, or who opens a JMAP session."""

    address_id: str
    account_id: str
    email: str
    display_name: str = ""


async def authenticate(conn: Conn, email: str, password: str) -> Principal | None:
    """The address ``email`` if ``password`` is its password; None otherwise.

    A login names its mailbox exactly: no +tag, no fallback domain. An unknown
    address costs the same hash work as a wrong password (no user probing).
    """
    local, _, domain = email.strip().lower().rpartition("@")
    row = await addresses_store.credentials(conn, local, domain) if local else None
    ok = await verify_password(row.password_hash if row else None, password)
    if row is None or not ok:
        return None
    return Principal(
        address_id=row.id,
        account_id=row.account_id,
        email=f"{local}@{domain}",
        display_name=row.display_name,
    )


async def account_addresses(conn: Conn, account_number: int) -> list[Principal]:
    """Every address the panel account numbered ``account_number`` owns (OAuth ``sub``).

    JMAP gives each as its own account to a Bearer token of that panel account.
    """
    return [
        Principal(
            address_id=a.id, account_id=a.account_id, email=a.email, display_name=a.display_name
        )
        for a in await addresses_store.for_account_number(conn, account_number)
    ]


@dataclass(frozen=True)
class SigningKey:
    domain: str
    selector: str
    algorithm: str
    # dkimpy's private key format (mail/dkim/keys.py): for the signer only, never logged.
    private_key: bytes


def key_sealer(secret: str) -> Sealer:
    """The sealer of DKIM private keys at rest, built once per process by the caller."""
    return dkim_sealer(secret)


async def signing_key(conn: Conn, sealer: Sealer, domain: str) -> SigningKey | None:
    """The active DKIM key of a hosted domain; None for a domain not hosted here."""
    name = domain.strip().lower().rstrip(".")
    row = await domains_store.get_by_name(conn, name)
    if row is None:
        return None
    key = await keys_store.sealed_active_key(conn, row.id)
    if key is None:
        return None
    return SigningKey(
        domain=name,
        selector=key.selector,
        algorithm=key.algorithm,
        private_key=open_private_key(sealer, key.private_key_sealed),
    )


async def address_quota(conn: Conn, address_id: str) -> tuple[int | None, int]:
    """(quota in bytes or None for unlimited, bytes used) of one hosted address.

    JMAP's Email/set create and Email/import answer overQuota past it
    (RFC 8621 4.6, 4.8), as delivery refuses mail to a full mailbox. The
    quota is the tighter of the address's own and what the account's plan
    (``storage_bytes`` over all its addresses, mail/billing/) leaves it, so
    every way mail is written in sees the same limit delivery does.
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


_QUOTA = Prepared(
    """
    SELECT a.quota_bytes, coalesce(q.used_bytes, 0) AS used_bytes, d.account_id,
           (SELECT (p.limits ->> 'storage_bytes')::bigint
              FROM mail.plans p WHERE p.id = mail.plan_of(d.account_id)) AS plan_storage_bytes
      FROM mail.addresses a
      JOIN mail.domains d ON d.id = a.domain_id
      LEFT JOIN mta.quota_usage q ON q.address_id = a.id
     WHERE a.id = %(address_id)s
    """
)


async def reserve_sends(conn: Conn, account_id: str, count: int, now: datetime) -> str | None:
    """Count ``count`` sends against the account's plan, in the caller's transaction.

    None when they fit; otherwise the reason, for the SMTP reply (nothing is counted).
    """
    # Imported here: entitlement reads storage usage through this module.
    from mail.billing import entitlement

    try:
        await entitlement.reserve(conn, account_id, "sends_per_month", count, now=now)
    except MailError as exc:
        return exc.message
    return None


async def return_sends(conn: Conn, account_id: str, count: int, now: datetime) -> None:
    """Give back sends reserved for mail that was then not queued."""
    from mail.billing import entitlement

    await entitlement.release_sends(conn, account_id, count, now)


_PUSH = Prepared(
    """
    SELECT bool_and(coalesce((p.features ->> 'jmap_push')::boolean, false)) AS allowed
      FROM mail.addresses a
      JOIN mail.domains d ON d.id = a.domain_id
      JOIN mail.plans p ON p.id = mail.plan_of(d.account_id)
     WHERE a.id = ANY(%(ids)s::text[]::uuid[])
    """
)


async def push_allowed(conn: Conn, address_ids: list[str]) -> bool:
    """Whether the plans of these addresses' accounts include ``jmap_push`` (mail/billing/).

    No plan row (billing never synchronised, a daemon alone): allowed, as the
    built-in plan limits nothing.
    """
    row = await _PUSH.fetch_one(conn, {"ids": address_ids})
    return row is None or row["allowed"] is None or bool(row["allowed"])
