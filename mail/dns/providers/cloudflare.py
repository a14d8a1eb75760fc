"""Publishing through Cloudflare's v4 API (https://developers.cloudflare.com/api/).

Calls used, all with ``Authorization: Bearer <token>`` (an API token with
Zone.DNS edit permission):

* ``GET /zones?name=<name>``: the zone; tried for the domain, then its parents;
* ``GET /zones/<zone_id>/dns_records?page=N&per_page=100``: what is there;
* ``POST /zones/<zone_id>/dns_records``: one call per missing record.

Every answer is Cloudflare's envelope ``{success, errors, messages, result}``
(list calls add ``result_info``). The base URL is CLOUDFLARE_API_URL.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import aiohttp

from mail.dns.providers.base import ProviderError, PublishResult, plan
from mail.dns.records import Record
from mail.domains.names import parent_names

PER_PAGE = 100
MAX_PAGES = 50
NAME = "Cloudflare"


def unquote_txt(content: str) -> str:
    """Cloudflare shows TXT content quoted (``"a" "b"``) or bare; give the text."""
    text = content.strip()
    if not (text.startswith('"') and text.endswith('"')):
        return content
    parts: list[str] = []
    current: list[str] = []
    inside = False
    escaped = False
    for ch in text:
        if escaped:
            current.append(ch)
            escaped = False
        elif ch == "\\" and inside:
            escaped = True
        elif ch == '"':
            if inside:
                parts.append("".join(current))
                current = []
            inside = not inside
        elif inside:
            current.append(ch)
    return "".join(parts)


def _absolute(host: str) -> str:
    return host.rstrip(".").lower() + "."


def record_value(item: dict[str, Any]) -> str | None:
    """A Cloudflare DNS record as our presentation value (see mail.dns.records)."""
    rtype = item.get("type")
    content = str(item.get("content") or "")
    if rtype == "TXT":
        return unquote_txt(content)
    if rtype == "MX":
        return f"{item.get('priority', 0)} {_absolute(content)}"
    if rtype == "CNAME":
        return _absolute(content)
    if rtype == "SRV":
        data = item.get("data") or {}
        if data:
            return (
                f"{data.get('priority', 0)} {data.get('weight', 0)} {data.get('port', 0)}"
                f" {_absolute(str(data.get('target', '')))}"
            )
        # Older answers carry only content: "weight port target", priority aside.
        weight, port, target = ([*content.split(), "", "", ""])[:3]
        return f"{item.get('priority', 0)} {weight} {port} {_absolute(target)}"
    return content or None


def create_payload(record: Record) -> dict[str, Any]:
    body: dict[str, Any] = {"type": record.type, "name": record.name, "ttl": record.ttl}
    if record.type == "MX":
        priority, target = record.value.split()
        body.update(content=target.rstrip("."), priority=int(priority))
    elif record.type == "SRV":
        priority, weight, port, target = record.value.split()
        body["data"] = {
            "priority": int(priority),
            "weight": int(weight),
            "port": int(port),
            "target": target.rstrip("."),
        }
    elif record.type == "CNAME":
        # Not proxied: mail clients and MTAs must reach this host directly.
        body.update(content=record.value.rstrip("."), proxied=False)
    else:
        body["content"] = record.value
    return body


def _errors_text(body: Any) -> str:
    errors = body.get("errors") if isinstance(body, dict) else None
    if not errors:
        return "no details given"
    parts = []
    for err in errors[:3]:
        if isinstance(err, dict):
            parts.append(f"{err.get('message', 'error')} (code {err.get('code', '?')})")
    return "; ".join(parts) or "no details given"


class CloudflarePublisher:
    provider_id = "cloudflare"

    def __init__(self, base_url: str, *, timeout: float = 15.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    async def publish(
        self, domain: str, records: Sequence[Record], api_token: str
    ) -> PublishResult:
        headers = {"Authorization": f"Bearer {api_token}", "Accept": "application/json"}
        timeout = aiohttp.ClientTimeout(total=self.timeout)
        try:
            async with aiohttp.ClientSession(headers=headers, timeout=timeout) as http:
                return await self._publish(http, domain, records)
        except ProviderError:
            raise
        except (TimeoutError, aiohttp.ClientError, ValueError):
            # No chaining: the request (and its Authorization header) stays out of any trace.
            raise ProviderError("unavailable", f"{NAME} could not be reached") from None

    async def _publish(
        self, http: aiohttp.ClientSession, domain: str, records: Sequence[Record]
    ) -> PublishResult:
        zone_id, zone_name = await self._zone(http, domain)
        existing = await self._existing(http, zone_id)
        todo = plan(records, existing)
        result = PublishResult(
            provider=self.provider_id,
            zone=zone_name,
            already_present=todo.present,
            conflicting=todo.conflicting,
        )
        for record in todo.create:
            try:
                await self._call(
                    http, "POST", f"/zones/{zone_id}/dns_records", json=create_payload(record)
                )
            except ProviderError as exc:
                # Say what is already there, so publishing again is understood.
                done = ", ".join(f"{r.type} {r.name}" for r in result.created) or "none"
                raise ProviderError(
                    exc.kind,
                    f"{exc.message} (at {record.type} {record.name}; created before: {done})",
                ) from None
            result.created.append(record)
        return result

    async def _call(
        self, http: aiohttp.ClientSession, method: str, path: str, **kwargs: Any
    ) -> dict[str, Any]:
        async with http.request(
            method, self.base_url + path, allow_redirects=False, **kwargs
        ) as resp:
            try:
                body = await resp.json(content_type=None)
            except ValueError:
                body = None
            if resp.status >= 500 or not isinstance(body, dict):
                raise ProviderError("unavailable", f"{NAME} answered HTTP {resp.status}")
            if resp.status in (401, 403):
                raise ProviderError("auth", f"{NAME} refused the API token: {_errors_text(body)}")
            if resp.status >= 400 or not body.get("success"):
                raise ProviderError("rejected", f"{NAME} refused the request: {_errors_text(body)}")
            return body

    async def _zone(self, http: aiohttp.ClientSession, domain: str) -> tuple[str, str]:
        for candidate in parent_names(domain):
            body = await self._call(http, "GET", "/zones", params={"name": candidate})
            zones = body.get("result") or []
            if zones and isinstance(zones[0], dict) and zones[0].get("id"):
                return str(zones[0]["id"]), str(zones[0].get("name", candidate))
        raise ProviderError("zone", f"no {NAME} zone for {domain} is reachable with this API token")

    async def _existing(self, http: aiohttp.ClientSession, zone_id: str) -> dict[str, list[str]]:
        existing: dict[str, list[str]] = {}
        page = 1
        while page <= MAX_PAGES:
            body = await self._call(
                http,
                "GET",
                f"/zones/{zone_id}/dns_records",
                params={"page": str(page), "per_page": str(PER_PAGE)},
            )
            for item in body.get("result") or []:
                value = record_value(item) if isinstance(item, dict) else None
                if value is not None:
                    key = f"{item['type']} {str(item.get('name', '')).rstrip('.').lower()}"
                    existing.setdefault(key, []).append(value)
            info = body.get("result_info") or {}
            if page >= int(info.get("total_pages") or 1):
                break
            page += 1
        return existing
