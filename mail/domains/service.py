"""Domain operations: add (with DKIM keys), DNS record set and checks, fallback, delete.

Every operation the routes call takes the context first and the signed-in
account's id; a domain of another account answers 404 like a missing one.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from common.db import Conn
from mail.billing import entitlement
from mail.context import MailContext
from mail.dkim import keys
from mail.dkim import store as keys_store
from mail.dkim.store import DkimKey
from mail.dns import status
from mail.dns.providers import detect
from mail.dns.providers.base import ProviderError, PublishResult
from mail.dns.records import DkimKeyRef, Record, record_set
from mail.domains import store
from mail.domains.names import InvalidDomainName, normalize_domain, parent_names
from mail.domains.store import Domain
from mail.errors import conflict, not_found, validation_error
from mail.web.lists import ListParams
from mail.web.ownership import found, parse_uuid
from mail.webhooks import emit

log = logging.getLogger(__name__)

CHECK_JOB = "mail.dns_check"
# Domains re-checked per run of the periodic job; the rest wait for the next run.
CHECK_BATCH = 50
CHECK_CONCURRENCY = 5
MAX_QUOTA_BYTES = 1 << 50  # 1 PiB: anything larger is a typo


def parse_name(raw: str) -> str:
    try:
        return normalize_domain(raw)
    except InvalidDomainName as exc:
        raise validation_error(f"name: {exc}") from None


def parse_quota(value: object, field: str) -> int:
    """A quota in bytes (0 = unlimited) for domains' default and addresses' own."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise validation_error(f"{field} must be an integer number of bytes (0 = unlimited)")
    if not 0 <= value <= MAX_QUOTA_BYTES:
        raise validation_error(f"{field} must be between 0 and {MAX_QUOTA_BYTES}")
    return value


async def owned(conn: Conn, account_id: str, domain_id: str, *, for_update: bool = False) -> Domain:
    """The domain if this account owns it; 404 otherwise (also for another account's)."""
    return found(
        await store.get_owned(conn, account_id, domain_id, for_update=for_update), "domain"
    )


async def list_domains(
    ctx: MailContext, account_id: str, params: ListParams
) -> tuple[list[Domain], int]:
    async with ctx.db.connection() as conn:
        return await store.list_for_account(conn, account_id, params)


async def get(ctx: MailContext, account_id: str, domain_id: str) -> Domain:
    async with ctx.db.connection() as conn:
        return await owned(conn, account_id, domain_id)


async def hosted(ctx: MailContext, name: str) -> Domain | None:
    """The domain hosted here under this (normalized) name, whoever owns it."""
    async with ctx.db.connection() as conn:
        return await store.get_by_name(conn, name)


async def _reread(ctx: MailContext, domain_id: str) -> Domain:
    async with ctx.db.connection() as conn:
        row = await store.get(conn, domain_id)
    assert row is not None
    return row


async def insert_key(
    conn: Conn,
    ctx: MailContext,
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
        private_key_sealed=keys.seal_private_key(ctx.dkim_sealer, pair),
        public_key_b64=pair.public_key_b64,
        active=active,
        now=now,
    )


async def add(ctx: MailContext, *, account_id: str, name: str, description: str) -> Domain:
    """Insert the domain with an active RSA key and a standby Ed25519 key (RFC 8463)."""
    async with ctx.db.connection() as conn:
        # 402 at once, before the key generation below.
        await entitlement.require_feature(conn, account_id, "custom_domains")
    # Generate before the transaction: RSA takes tens of milliseconds.
    rsa = await keys.generate(keys.RSA)
    ed = await keys.generate(keys.ED25519)
    now = ctx.clock.now()
    async with ctx.db.transaction() as conn:
        await entitlement.require_feature(conn, account_id, "custom_domains")
        await entitlement.reserve(conn, account_id, "domains", now=now)
        if await store.exists_name(conn, name):
            # One instance, one owner per domain: whoever holds it, it's taken.
            raise conflict(f"the domain {name} is already hosted here")
        domain_id = await store.insert(
            conn, account_id=account_id, name=name, description=description, now=now
        )
        await insert_key(conn, ctx, domain_id, rsa, active=True, now=now)
        await insert_key(conn, ctx, domain_id, ed, active=False, now=now)
        created = await store.get(conn, domain_id)
        assert created is not None
        await emit.domain_event(conn, "domain.created", created, now)
    return await _reread(ctx, domain_id)


async def update(
    ctx: MailContext, account_id: str, domain_id: str, changes: dict[str, Any]
) -> Domain:
    async with ctx.db.transaction() as conn:
        row = await owned(conn, account_id, domain_id)
        # Over the plan's domains after a downgrade: they are read-only.
        await entitlement.require_within(conn, account_id, "domains", now=ctx.clock.now())
        await store.update(conn, row.id, changes, ctx.clock.now())
        updated = await store.get(conn, row.id)
        assert updated is not None
        await emit.domain_event(conn, "domain.updated", updated, ctx.clock.now())
    return updated


async def delete(ctx: MailContext, account_id: str, domain_id: str) -> None:
    # One transaction: the domain, its keys, its addresses and their mailboxes
    # (mta tables reference mail.addresses ON DELETE CASCADE) go together.
    async with ctx.db.transaction() as conn:
        row = await owned(conn, account_id, domain_id)
        await emit.domain_event(conn, "domain.deleted", row, ctx.clock.now())
        await store.delete(conn, row.id)


def expected_records(ctx: MailContext, domain: Domain, key_rows: list[DkimKey]) -> list[Record]:
    refs = [DkimKeyRef(k.selector, k.algorithm, k.public_key_b64) for k in key_rows]
    return record_set(domain.name, ctx.hosting, refs, dmarc_policy=domain.dmarc_policy)


@dataclass(frozen=True)
class RecordStatus:
    record: Record
    status: str
    found: list[str] | None


def statuses(domain: Domain, records: list[Record]) -> list[RecordStatus]:
    """Each record against what the last check found (``unchecked`` if not looked up)."""
    found_by_key = domain.dns_found or {}
    result = []
    for record in records:
        if record.key not in found_by_key:
            result.append(RecordStatus(record, status.UNCHECKED, None))
            continue
        found = found_by_key[record.key]
        result.append(RecordStatus(record, status.evaluate(record, found), found))
    return result


async def record_statuses(conn: Conn, ctx: MailContext, domain: Domain) -> list[RecordStatus]:
    key_rows = await keys_store.list_for_domain(conn, domain.id)
    return statuses(domain, expected_records(ctx, domain, key_rows))


async def dns_records(
    ctx: MailContext, account_id: str, domain_id: str
) -> tuple[Domain, list[RecordStatus]]:
    """The domain and each record it needs, against what the last check found."""
    async with ctx.db.connection() as conn:
        row = await owned(conn, account_id, domain_id)
        return row, await record_statuses(conn, ctx, row)


async def zone_records(
    ctx: MailContext, account_id: str, domain_id: str
) -> tuple[Domain, list[Record]]:
    async with ctx.db.connection() as conn:
        row = await owned(conn, account_id, domain_id)
        key_rows = await keys_store.list_for_domain(conn, row.id)
    return row, expected_records(ctx, row, key_rows)


async def provider(
    ctx: MailContext, account_id: str, domain_id: str
) -> tuple[detect.Provider, list[str] | None]:
    """The DNS provider the domain's nameservers point at, and those nameservers."""
    row = await get(ctx, account_id, domain_id)
    found = await nameservers(ctx, row.name)
    return detect.detect(found or []), found


async def publish(
    ctx: MailContext, account_id: str, domain_id: str, api_token: str, provider_id: str | None
) -> PublishResult:
    """Create the expected records at the provider with the caller's API token.

    The token lives in this call's locals and the provider call only: never stored.
    """
    row, records = await zone_records(ctx, account_id, domain_id)
    if provider_id is None:
        provider_id = detect.detect(await nameservers(ctx, row.name) or []).id
    elif detect.by_id(provider_id) is None:
        raise validation_error(
            f"provider must be one of {', '.join(p.id for p in detect.PROVIDERS)}"
        )
    publisher = ctx.publisher(provider_id)
    if publisher is None:
        raise validation_error(
            f"publishing through {provider_id} is not supported; supported:"
            f" {', '.join(ctx.publish_providers)} (or import GET dns/zone by hand)"
        )
    try:
        return await publisher.publish(row.name, records, api_token)
    except ProviderError as exc:
        raise exc.to_mail_error() from None


async def check_now(
    ctx: MailContext, account_id: str, domain_id: str
) -> tuple[Domain, list[RecordStatus]]:
    """Look the domain's records up now (the panel's "check" button) and answer as dns_records."""
    row = await get(ctx, account_id, domain_id)
    await check(ctx, row.id, ctx.clock.now())
    async with ctx.db.connection() as conn:
        checked = await store.get(conn, row.id)
        assert checked is not None
        return checked, await record_statuses(conn, ctx, checked)


async def check(ctx: MailContext, domain_id: str, now: datetime) -> None:
    """Look every record up now and store what was found and the overall status."""
    async with ctx.db.connection() as conn:
        domain = await store.get(conn, domain_id)
        if domain is None:
            return  # deleted meanwhile
        key_rows = await keys_store.list_for_domain(conn, domain_id)
    records = expected_records(ctx, domain, key_rows)
    # The lookups happen outside any transaction: DNS can take seconds.
    found = await ctx.resolver.lookup_many((r.name, r.type) for r in records)
    overall = status.overall([status.evaluate(r, found[r.key]) for r in records])
    async with ctx.db.transaction() as conn:
        await store.save_check(conn, domain_id, status=overall, found=found, now=now)
        if overall != domain.dns_status:
            # A status change is news for webhooks (Resend: domain.updated).
            checked = await store.get(conn, domain_id)
            if checked is not None:
                await emit.domain_event(conn, "domain.updated", checked, now)


async def check_due(ctx: MailContext, now: datetime) -> int:
    """The periodic job: re-check domains not checked within the interval."""
    interval = timedelta(seconds=ctx.hosting.dns_check_interval_seconds)
    async with ctx.db.connection() as conn:
        # A little slack so a domain checked at the last run is due at this one.
        due = await store.due_for_check(conn, now - interval + timedelta(seconds=60), CHECK_BATCH)
    # A few domains at a time: one slow zone (timeouts) must not hold up the run.
    gate = asyncio.Semaphore(CHECK_CONCURRENCY)

    async def one(domain_id: str) -> None:
        async with gate:
            try:
                await check(ctx, domain_id, now)
            except Exception:
                # One broken domain must not starve the others; the next run retries it.
                log.exception("DNS check of domain %s failed", domain_id)

    await asyncio.gather(*(one(d) for d in due))
    return len(due)


async def nameservers(ctx: MailContext, name: str) -> list[str] | None:
    """NS of the zone holding ``name``: the name's own, else its closest parent's.

    None when a lookup failed (we cannot tell), [] when no parent has any.
    """
    for candidate in parent_names(name):
        found = await ctx.resolver.lookup(candidate, "NS")
        if found is None:
            return None
        if found:
            return sorted(found)
    return []


async def set_fallback(
    ctx: MailContext, account_id: str, domain_id: str, fallback_id: str | None
) -> Domain:
    async with ctx.db.transaction() as conn:
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
        await store.set_fallback(conn, domain_id, fallback_id, ctx.clock.now())
    return await _reread(ctx, domain_id)


async def list_keys(
    ctx: MailContext, account_id: str, domain_id: str
) -> tuple[Domain, list[DkimKey]]:
    async with ctx.db.connection() as conn:
        row = await owned(conn, account_id, domain_id)
        return row, await keys_store.list_for_domain(conn, row.id)


async def create_key(
    ctx: MailContext, account_id: str, domain_id: str, algorithm: str
) -> tuple[Domain, DkimKey]:
    """A new standby key, for rotation (published, then activated)."""
    # Check before generating, so a wrong domain answers at once.
    await get(ctx, account_id, domain_id)
    pair = await keys.generate(algorithm)
    async with ctx.db.transaction() as conn:
        row = await owned(conn, account_id, domain_id)
        key_id = await insert_key(conn, ctx, row.id, pair, active=False, now=ctx.clock.now())
        key = await keys_store.get(conn, row.id, key_id)
    assert key is not None
    return row, key


async def delete_key(ctx: MailContext, account_id: str, domain_id: str, raw_key_id: str) -> None:
    """Retire a standby key (never the active one)."""
    row = await get(ctx, account_id, domain_id)
    # The key id is checked after the domain, so a foreign domain answers "domain".
    key_id = parse_uuid(raw_key_id, "key")
    async with ctx.db.transaction() as conn:
        key = await keys_store.get(conn, row.id, key_id, for_update=True)
        if key is None:
            raise not_found("key")
        if key.active:
            raise conflict("the active key signs mail: activate another key before deleting it")
        await keys_store.delete(conn, row.id, key_id)


async def activate_key(
    ctx: MailContext, account_id: str, domain_id: str, raw_key_id: str
) -> tuple[Domain, DkimKey]:
    row = await get(ctx, account_id, domain_id)
    key_id = parse_uuid(raw_key_id, "key")
    async with ctx.db.transaction() as conn:
        key = await keys_store.get(conn, row.id, key_id)
        if key is None:
            raise not_found("key")
        await keys_store.activate(conn, row.id, key_id)
        activated = await keys_store.get(conn, row.id, key_id)
    assert activated is not None
    return row, activated
