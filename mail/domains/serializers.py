"""Response shapes of domains, DKIM keys and DNS records, built only here.

DKIM private keys are never selected for these (mail/dkim/store.py), so they
cannot appear; the provider API token is never stored, so neither can it.
"""

from __future__ import annotations

from typing import Any

from mail.dkim.keys import record_value
from mail.dkim.store import DkimKey
from mail.dns.providers.base import PublishResult
from mail.dns.providers.detect import Provider
from mail.dns.records import Record
from mail.domains.names import unicode_domain
from mail.domains.service import RecordStatus
from mail.domains.store import Domain


def domain(row: Domain) -> dict[str, Any]:
    fallback = None
    if row.fallback_domain_id:
        fallback = {"id": row.fallback_domain_id, "name": row.fallback_domain_name}
    return {
        "object": "domain",
        "id": row.id,
        "name": row.name,
        "unicode_name": unicode_domain(row.name),
        "description": row.description,
        "dmarc_policy": row.dmarc_policy,
        "default_quota_bytes": row.default_quota_bytes,
        "fallback_domain_id": row.fallback_domain_id,
        "fallback_domain": fallback,
        "address_count": int(row.address_count or 0),
        "dns_status": row.dns_status,
        "dns_checked_at": row.dns_checked_at,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }


def record(rec: Record) -> dict[str, Any]:
    return {
        "purpose": rec.purpose,
        "type": rec.type,
        "name": rec.name,
        "value": rec.value,
        "ttl": rec.ttl,
    }


def record_status(item: RecordStatus) -> dict[str, Any]:
    return {
        "object": "dns_record",
        **record(item.record),
        "status": item.status,
        "found": item.found,
    }


def record_set(row: Domain, items: list[RecordStatus]) -> dict[str, Any]:
    return {
        "object": "dns_record_set",
        "domain_id": row.id,
        "domain": row.name,
        "status": row.dns_status,
        "checked_at": row.dns_checked_at,
        "records": [record_status(i) for i in items],
    }


def dkim_key(key: DkimKey, domain_name: str) -> dict[str, Any]:
    return {
        "object": "dkim_key",
        "id": key.id,
        "selector": key.selector,
        "algorithm": key.algorithm,
        "public_key_record": {
            "type": "TXT",
            "name": f"{key.selector}._domainkey.{domain_name}",
            "value": record_value(key.algorithm, key.public_key_b64),
        },
        "active": key.active,
        "created_at": key.created_at,
    }


def provider(found: Provider, nameservers: list[str] | None, publishable: bool) -> dict[str, Any]:
    return {
        "object": "dns_provider",
        "provider": found.id,
        "name": found.name,
        "nameservers": nameservers,
        "publish_supported": publishable,
    }


def publish_result(result: PublishResult) -> dict[str, Any]:
    return {
        "object": "dns_publish",
        "provider": result.provider,
        "zone": result.zone,
        "created": [record(r) for r in result.created],
        "already_present": [record(r) for r in result.already_present],
        "conflicting": [record(r) for r in result.conflicting],
    }
