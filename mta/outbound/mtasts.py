"""MTA-STS (RFC 8461): a recipient domain's demand for verified TLS to its MX hosts.

The policy is announced by a TXT record ``_mta-sts.<domain>`` ("v=STSv1;
id=...") and served at ``https://mta-sts.<domain>/.well-known/mta-sts.txt``.
It is fetched through the SSRF-guarded client (common/outbound.py: no
redirects, public addresses only, a small answer cap) and kept for its
max_age; a changed id in DNS fetches it again. A domain without the record,
or whose policy cannot be fetched while none is cached, is sent to as
before (opportunistic TLS): RFC 8461 5.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from mta.authentication.dns import Resolver, TempError

log = logging.getLogger(__name__)

MAX_AGE_CAP = 31557600  # RFC 8461 3.2: at most a year
CACHE_SIZE = 10_000

Fetch = Callable[[str], Awaitable[tuple[int, bytes]]]


@dataclass(frozen=True)
class Policy:
    id: str
    mode: str  # enforce | testing | none
    mx: tuple[str, ...]
    max_age: int

    def matches(self, host: str) -> bool:
        """RFC 8461 4.1: exact, or "*.example.com" for exactly one more label."""
        host = host.lower().rstrip(".")
        for pattern in self.mx:
            if pattern.startswith("*."):
                head, _, rest = host.partition(".")
                if head and rest == pattern[2:]:
                    return True
            elif host == pattern:
                return True
        return False


def parse_policy(policy_id: str, text: str) -> Policy | None:
    fields: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip().lower(), []).append(value.strip())
    if fields.get("version") != ["STSv1"]:
        return None
    mode = (fields.get("mode") or [""])[0].lower()
    if mode not in ("enforce", "testing", "none"):
        return None
    try:
        max_age = min(int((fields.get("max_age") or ["0"])[0]), MAX_AGE_CAP)
    except ValueError:
        return None
    mx = tuple(m.lower().rstrip(".") for m in fields.get("mx", []))
    if mode != "none" and not mx:
        return None
    return Policy(policy_id, mode, mx, max_age)


def record_id(txts: list[str]) -> str | None:
    found = [t for t in txts if t.replace(" ", "").lower().startswith("v=stsv1;")]
    if len(found) != 1:
        return None
    for part in found[0].split(";"):
        key, _, value = part.strip().partition("=")
        if key.strip().lower() == "id" and value.strip():
            return value.strip()
    return None


class PolicyCache:
    def __init__(
        self,
        resolver: Resolver,
        fetch: Fetch,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.resolver = resolver
        self.fetch = fetch
        self.clock = clock
        self._policies: dict[str, tuple[float, Policy]] = {}

    async def get(self, domain: str) -> Policy | None:
        cached = self._policies.get(domain)
        if cached is not None and cached[0] <= self.clock():
            del self._policies[domain]
            cached = None
        try:
            policy_id = record_id(await self.resolver.txt(f"_mta-sts.{domain}"))
        except TempError:
            policy_id = None
        if policy_id is None:
            # No record (or DNS trouble): a cached policy still holds (RFC 8461 5.1).
            return cached[1] if cached else None
        if cached is not None and cached[1].id == policy_id:
            return cached[1]
        try:
            status, body = await self.fetch(f"https://mta-sts.{domain}/.well-known/mta-sts.txt")
        except Exception as exc:  # unreachable, refused by the guard, bad certificate
            log.info("MTA-STS policy of %s not fetched: %s", domain, exc)
            return cached[1] if cached else None
        policy = parse_policy(policy_id, body.decode("utf-8", "replace")) if status == 200 else None
        if policy is None:
            return cached[1] if cached else None
        if len(self._policies) >= CACHE_SIZE:
            self._policies.clear()
        self._policies[domain] = (self.clock() + policy.max_age, policy)
        return policy
