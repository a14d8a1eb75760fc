"""What the domain and address pages show, read through the services the API uses.

The pages render their lists and details on the server, so they read without
JavaScript; every change still goes through /api (the screen modules), and a
module refreshes a page's regions by fetching the page again. Lists read the
query with the API's own list parameters (``page``, ``per_page``, ``search``,
``sort``, ``direction``) and build the API's envelope, so the page and
``GET /api/domains`` page and sort alike.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from aiohttp import web

from mail.addresses import serializers as address_serializers
from mail.addresses import service as addresses
from mail.addresses import store as address_store
from mail.auth.sessions import current
from mail.context import mail_context
from mail.discovery import client_config
from mail.dns.records import DMARC_POLICIES
from mail.domains import serializers as domain_serializers
from mail.domains import service as domains
from mail.domains import store as domain_store
from mail.errors import MailError
from mail.mailboxes import service as mailboxes
from mail.mailboxes.routes import ACTIVITY_KINDS, ACTIVITY_SORTS
from mail.web.lists import PER_PAGE_CHOICES, ListParams, Sorts, list_envelope, parse_list_params
from mail.web.ownership import parse_id

# The fallback choice lists the account's other domains; an account with more
# than this sees the first ones by name (a select of hundreds helps nobody).
FALLBACK_CHOICES = 100


def account_id(request: web.Request) -> str:
    auth = current(request)
    assert auth is not None, "pages of the panel are wrapped in signed_in"
    return str(auth.account.id)


def list_params(query: Mapping[str, str], sorts: Sorts) -> ListParams:
    """The API's list parameters; a malformed one (page=abc) falls back to the defaults."""
    try:
        return parse_list_params(query, sorts)
    except MailError:
        return parse_list_params({}, sorts)


def listing(params: ListParams, data: list[dict[str, Any]], total: int) -> dict[str, Any]:
    """The API's list envelope plus what the page's controls need to show it."""
    envelope = list_envelope(data, params, total)
    envelope.update(
        search=params.search or "",
        sort=params.sort,
        direction=params.direction,
        sorts=list(params.sorts.columns),
        per_page_choices=PER_PAGE_CHOICES,
    )
    return envelope


async def domain_list(request: web.Request) -> dict[str, Any]:
    params = list_params(request.query, domain_store.DOMAIN_SORTS)
    rows, total = await domains.list_domains(mail_context(request), account_id(request), params)
    data = [domain_serializers.domain(r) for r in rows]
    return {"domains": listing(params, data, total), "sort_words": DOMAIN_SORT_WORDS}


async def domain_page(request: web.Request) -> dict[str, Any]:
    """A domain with its record set, its DKIM keys and the domains it may fall back to."""
    domain_id = parse_id(request, "domain_id")
    ctx = mail_context(request)
    owner = account_id(request)
    row, items = await domains.dns_records(ctx, owner, domain_id)
    _, key_rows = await domains.list_keys(ctx, owner, domain_id)
    by_name = parse_list_params(
        {"sort": "name", "direction": "asc", "per_page": str(FALLBACK_CHOICES)},
        domain_store.DOMAIN_SORTS,
    )
    others, _ = await domains.list_domains(ctx, owner, by_name)
    return {
        "domain": domain_serializers.domain(row),
        "dns": domain_serializers.record_set(row, items),
        "keys": [domain_serializers.dkim_key(k, row.name) for k in key_rows],
        "fallback_choices": [domain_serializers.domain(d) for d in others if d.id != row.id],
        "dmarc_policies": DMARC_POLICIES,
    }


async def address_list(request: web.Request) -> dict[str, Any]:
    domain_id = parse_id(request, "domain_id")
    ctx = mail_context(request)
    owner = account_id(request)
    domain = domain_serializers.domain(await domains.get(ctx, owner, domain_id))
    params = list_params(request.query, address_store.ADDRESS_SORTS)
    rows, total = await addresses.list_addresses(ctx, owner, domain_id, params)
    data = [address_serializers.address(r) for r in rows]
    return {
        "domain": domain,
        "addresses": listing(params, data, total),
        "sort_words": ADDRESS_SORT_WORDS,
    }


async def address_page(request: web.Request) -> dict[str, Any]:
    """An address with its folders, usage and a page of its activity."""
    address_id = parse_id(request, "address_id")
    ctx = mail_context(request)
    owner = account_id(request)
    row = await addresses.get(ctx, owner, address_id)
    folders, (used, emails) = await mailboxes.folders(ctx, owner, address_id)
    params = list_params(request.query, ACTIVITY_SORTS)
    kind = request.query.get("kind") or None
    if kind not in ACTIVITY_KINDS:
        kind = None
    events, total = await mailboxes.activity(
        ctx, owner, address_id, limit=params.limit, offset=params.offset, kind=kind
    )
    return {
        "address": address_serializers.address(row),
        "folders": folders,
        "usage": {"used_bytes": used, "emails": emails},
        "activity": {
            "data": events,
            "page": params.page,
            "pages": math.ceil(total / params.per_page),
            "total": total,
            "kind": kind or "",
        },
        "activity_kinds": ACTIVITY_KINDS,
        "clients": client_rows(client_config.endpoints(ctx.hosting)),
    }


SECURITY_WORDS = {"tls": "SSL/TLS", "starttls": "STARTTLS"}


def client_rows(ep: client_config.Endpoints) -> list[dict[str, Any]]:
    """The mail app settings the address screen shows, as autoconfig tells them."""
    smtp = client_config.Server(ep.smtp_hostname, ep.smtp_port, ep.smtp_security)
    groups = [
        ("IMAP", "Reading mail", ep.imap),
        ("POP3", "Fetching mail", ep.pop3),
        ("SMTP", "Sending mail", (smtp,)),
        ("ManageSieve", "Filters", ep.managesieve),
    ]
    return [
        {
            "protocol": protocol,
            "use": use,
            "hostname": server.hostname,
            "port": server.port,
            "security": SECURITY_WORDS[server.security],
        }
        for protocol, use, servers in groups
        for server in servers
    ]


def size(value: int) -> str:
    """Bytes in words a person reads (binary units, as mail clients show quotas)."""
    if value < 1024:
        return f"{value} bytes"
    amount, unit = value / 1024, "KiB"
    for bigger in ("MiB", "GiB", "TiB"):
        if amount < 1024:
            break
        amount, unit = amount / 1024, bigger
    return f"{amount:.1f} {unit}".replace(".0 ", " ")


def when(value: datetime | None) -> str:
    """A stored time as the page shows it (UTC, to the minute)."""
    return "never" if value is None else f"{value:%Y-%m-%d %H:%M} UTC"


# Words the pages show for the API's values (one place: the list module reads
# dns_words from the page, data-words, rather than keeping its own copy).
DNS_WORDS = {
    "verified": "Verified",
    "incomplete": "Incomplete",
    "unchecked": "Not checked",
    "mismatch": "Other value",
    "missing": "Missing",
    "error": "Lookup failed",
}
PURPOSE_WORDS = {
    "mx": "Receiving mail",
    "spf": "Who may send",
    "dkim": "Signing key",
    "dmarc": "Policy for failures",
    "mta_sts": "TLS policy id",
    "mta_sts_host": "TLS policy host",
    "tls_rpt": "TLS reports",
    "autoconfig": "Client setup",
    "autodiscover": "Client setup (Outlook)",
    "submission_srv": "Sending from apps",
    "submissions_srv": "Sending from apps (TLS)",
    "imaps_srv": "Reading with IMAP (TLS)",
    "imap_srv": "Reading with IMAP",
    "pop3s_srv": "Fetching with POP3 (TLS)",
    "pop3_srv": "Fetching with POP3",
    "sieve_srv": "Filters from apps (ManageSieve)",
    "jmap_srv": "JMAP clients",
}
ALGORITHM_WORDS = {"rsa-sha256": "RSA 2048", "ed25519-sha256": "Ed25519"}
DMARC_WORDS = {"none": "None: only report", "quarantine": "Quarantine: to junk", "reject": "Reject"}
DOMAIN_SORT_WORDS = {"name": "Name", "created_at": "Date added", "dns_status": "DNS status"}
ADDRESS_SORT_WORDS = {
    "local_part": "Address",
    "created_at": "Date added",
    "quota_bytes": "Quota",
    "display_name": "Name",
}
ACTIVITY_WORDS = {
    "received": "Received",
    "filtered": "Filtered",
    "refused": "Refused",
    "failed": "Filter failed",
}

# What the templates of these pages call and read.
HELPERS: dict[str, Any] = {
    "size": size,
    "when": when,
    "dns_words": DNS_WORDS,
    "purpose_words": PURPOSE_WORDS,
    "algorithm_words": ALGORITHM_WORDS,
    "dmarc_words": DMARC_WORDS,
    "activity_words": ACTIVITY_WORDS,
}
