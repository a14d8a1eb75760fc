"""Domain operations: add (with DKIM keys), DNS record set and checks, fallback, delete."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from common.db import Conn, Database
from mail.dkim import keys
from mail.dkim import store as keys_store
from mail.dns import status
from mail.dns.records import DkimKeyRef, Record, record_set
from mail.domains import store
from mail.domains.context import HostingContext
from mail.domains.names import InvalidDomainName, normalize_domain, parent_names
from mail.errors import conflict, not_found, validation_error

log = logging.getLogger(__name__)

CHECK_JOB = "mail.dns_check"
# Domains re-checked per run of the periodic job; the rest wait for the next run.
CHECK_BATCH = 50
CHECK_CONCURRENCY = 5


def parse_name(raw: str) -> str:
    try:
        return normalize_domain(raw)
    except InvalidDomainName as exc:
        raise validation_error(f"name: {exc}") from None


async def insert_key(
    conn: Conn,
    hctx: HostingContext,
    domain_id: str,
    pair: keys.KeyPair,
    *,
    active: bool,
    now: datetime,
) -> str:
    return await keys_store.insert(
        conn,
        domain_id=domain_id,
        selector=keys.new_selector(pair.algorithm, now),
        algorithm=pair.algorithm,
        private_key_sealed=keys.seal_private_key(hctx.dkim_sealer, pair),
        public_key_b64=pair.public_key_b64,
        active=active,
        now=now,
    )


async def add(
    db: Database,
    hctx: HostingContext,
    *,
    account_id: str,
    name: str,
    description: str,
    now: datetime,
) -> str:
    """Insert the domain with an active RSA key and a standby Ed25519 key (RFC 8463)."""
    # Generate before the transaction: RSA takes tens of milliseconds.
    rsa = await keys.generate(keys.RSA)
    ed = await keys.generate(keys.ED25519)
    async with db.transaction() as conn:
        if await store.exists_name(conn, name):
            # One instance, one owner per domain: whoever holds it, it's taken.
            raise conflict(f"the domain {name} is already hosted here")
        domain_id = await store.insert(
            conn, account_id=account_id, name=name, description=description, now=now
        )
        await insert_key(conn, hctx, domain_id, rsa, active=True, now=now)
        await insert_key(conn, hctx, domain_id, ed, active=False, now=now)
    return domain_id


def expected_records(
    hctx: HostingContext, domain: dict[str, Any], key_rows: list[dict[str, Any]]
) -> list[Record]:
    refs = [DkimKeyRef(k["selector"], k["algorithm"], k["public_key_b64"]) for k in key_rows]
    return record_set(domain["name"], hctx.hosting, refs, dmarc_policy=domain["dmarc_policy"])


@dataclass(frozen=True)
class RecordStatus:
    record: Record
    status: str
    found: list[str] | None


def statuses(domain: dict[str, Any], records: list[Record]) -> list[RecordStatus]:
    """Each record against what the last check found (``unchecked`` if not looked up)."""
    found_by_key: dict[str, Any] = domain.get("dns_found") or {}
    result = []
    for record in records:
        if record.key not in found_by_key:
            result.append(RecordStatus(record, status.UNCHECKED, None))
            continue
        found = found_by_key[record.key]
        result.append(RecordStatus(record, status.evaluate(record, found), found))
    return result


async def record_statuses(
    conn: Conn, hctx: HostingContext, domain: dict[str, Any]
) -> list[RecordStatus]:
    key_rows = await keys_store.list_for_domain(conn, domain["id"])
    return statuses(domain, expected_records(hctx, domain, key_rows))


async def check(db: Database, hctx: HostingContext, domain_id: str, now: datetime) -> None:
    """Look every record up now and store what was found and the overall status."""
    async with db.connection() as conn:
        domain = await store.get(conn, domain_id)
        if domain is None:
            return  # deleted meanwhile
        key_rows = await keys_store.list_for_domain(conn, domain_id)
    records = expected_records(hctx, domain, key_rows)
    # The lookups happen outside any transaction: DNS can take seconds.
    found = await hctx.resolver.lookup_many((r.name, r.type) for r in records)
    overall = status.overall([status.evaluate(r, found[r.key]) for r in records])
    async with db.connection() as conn:
        await store.save_check(conn, domain_id, status=overall, found=found, now=now)


async def check_due(db: Database, hctx: HostingContext, now: datetime) -> int:
    """The periodic job: re-check domains not checked within the interval."""
    interval = timedelta(seconds=hctx.hosting.dns_check_interval_seconds)
    async with db.connection() as conn:
        # A little slack so a domain checked at the last run is due at this one.
        due = await store.due_for_check(conn, now - interval + timedelta(seconds=60), CHECK_BATCH)
    # A few domains at a time: one slow zone (timeouts) must not hold up the run.
    gate = asyncio.Semaphore(CHECK_CONCURRENCY)

    async def one(domain_id: str) -> None:
        async with gate:
            try:
                await check(db, hctx, domain_id, now)
            except Exception:
                # One broken domain must not starve the others; the next run retries it.
                log.exception("DNS check of domain %s failed", domain_id)

    await asyncio.gather(*(one(d) for d in due))
    return len(due)


async def nameservers(hctx: HostingContext, name: str) -> list[str] | None:
    """NS of the zone holding ``name``: the name's own, else its closest parent's.

    None when a lookup failed (we cannot tell), [] when no parent has any.
    """
    for candidate in parent_names(name):
        found = await hctx.resolver.lookup(candidate, "NS")
        if found is None:
            return None
        if found:
            return sorted(found)
    return []


async def set_fallback(
    db: Database,
    *,
    account_id: str,
    domain_id: str,
    fallback_id: str | None,
    now: datetime,
) -> None:
    async with db.transaction() as conn:
        await store.lock_account_fallbacks(conn, account_id)
        if await store.get_owned(conn, account_id, domain_id, for_update=True) is None:
            raise not_found("domain")
        if fallback_id is not None:
            if fallback_id == domain_id:
                raise validation_error("a domain cannot be its own fallback")
            if await store.get_owned(conn, account_id, fallback_id) is None:
                raise not_found("fallback domain")
            if domain_id in await store.fallback_chain(conn, fallback_id):
                raise validation_error(
                    "this fallback would form a loop: the fallback domain already falls back"
                    " (directly or through others) to this domain"
                )
        await store.set_fallback(conn, domain_id, fallback_id, now)


async def delete_key(db: Database, *, domain_id: str, key_id: str) -> None:
    async with db.transaction() as conn:
        key = await keys_store.get(conn, domain_id, key_id, for_update=True)
        if key is None:
            raise not_found("key")
        if key["active"]:
            raise conflict("the active key signs mail: activate another key before deleting it")
        await keys_store.delete(conn, domain_id, key_id)


async def activate_key(db: Database, *, domain_id: str, key_id: str) -> dict[str, Any]:
    async with db.transaction() as conn:
        key = await keys_store.get(conn, domain_id, key_id)
        if key is None:
            raise not_found("key")
        await keys_store.activate(conn, domain_id, key_id)
        activated = await keys_store.get(conn, domain_id, key_id)
    assert activated is not None
    return activated
