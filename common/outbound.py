"""The SSRF-safe outbound HTTP client: webhooks (and later mail) call other systems through it.

A target a user typed must not reach the inside of our network. The check is
made on the addresses the connection is actually opened to, after DNS, so a
name that resolves to a private address (or is re-pointed there between a
check and the connect: DNS rebinding) is refused as surely as a literal one.
Refused: private, loopback, link-local, multicast, reserved and unspecified
addresses, IPv4 and IPv6 alike, IPv4-mapped and 6to4/Teredo-embedded IPv4
addresses judged by the IPv4 inside. Redirects are never followed (a public
target could bounce us inside), proxies from the environment are not used,
and answers are read up to a small cap. ``allow_private=True``
(WEBHOOK_ALLOW_PRIVATE) lifts the address rule, for development and tests.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp.abc import ResolveResult

DEFAULT_TIMEOUT_SECONDS = 10.0
# How much of an answer is kept (for the attempt record); the rest is not read.
MAX_ANSWER_BYTES = 4096

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class TargetRefused(aiohttp.ClientConnectionError):
    """The target resolves to an address outbound calls may not reach."""


def is_public_address(value: str | Address) -> bool:
    """True when ``value`` is a globally routable unicast address."""
    ip = ipaddress.ip_address(value) if isinstance(value, str) else value
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if embedded is not None:
            return is_public_address(embedded)
    return not (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
        or not ip.is_global
    )


MAX_URL = 2000


def url_problem(value: object, *, allow_private: bool) -> str | None:
    """Why ``value`` cannot be a webhook target, or None.

    The connect-time check (:class:`_GuardedConnector`) is the rule; this only
    refuses at once what could never be reached, so the person typing the
    URL hears it on save rather than at the first delivery.
    """
    if not isinstance(value, str) or not value or len(value) > MAX_URL:
        return f"must be an http or https URL of at most {MAX_URL} characters"
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "must be an http or https URL"
    if parts.username or parts.password:
        return "must not carry credentials; the signature authenticates the sender"
    if not allow_private:
        host = parts.hostname
        try:
            literal = ipaddress.ip_address(host)
        except ValueError:
            literal = None
        if (literal is not None and not is_public_address(literal)) or host == "localhost":
            return "private, loopback and link-local targets are refused"
    return None


class _GuardedConnector(aiohttp.TCPConnector):
    """Refuses, at connect time, every resolved address that is not public."""

    async def _resolve_host(
        self, host: str, port: int, traces: Sequence[Any] | None = None
    ) -> list[ResolveResult]:
        results = await super()._resolve_host(host, port, traces)
        allowed = [r for r in results if is_public_address(r["host"].split("%", 1)[0])]
        if not allowed:
            raise TargetRefused(f"{host} resolves only to addresses outbound calls may not reach")
        return allowed


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    headers: dict[str, str]


class OutboundClient:
    """One aiohttp session with the rules above; ``async with`` or ``close()`` it."""

    def __init__(
        self, *, allow_private: bool = False, timeout: float = DEFAULT_TIMEOUT_SECONDS
    ) -> None:
        self.allow_private = allow_private
        self.timeout = timeout
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            kind = aiohttp.TCPConnector if self.allow_private else _GuardedConnector
            # No DNS cache: every connect resolves, and every resolution is judged.
            connector = kind(use_dns_cache=False, limit=20)
            self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                trust_env=False,
            )
        return self._session

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> Answer:
        """POST ``body``; a 3xx is returned as it is, never followed."""
        session = self._open()
        async with session.post(url, data=body, headers=headers, allow_redirects=False) as resp:
            data = await resp.content.read(MAX_ANSWER_BYTES)
            return Answer(resp.status, data, dict(resp.headers))

    async def get(self, url: str, *, limit: int = MAX_ANSWER_BYTES) -> Answer:
        """GET ``url`` (an MTA-STS policy); a 3xx is returned as it is, never followed."""
        session = self._open()
        async with session.get(url, allow_redirects=False) as resp:
            data = await resp.content.read(limit)
            return Answer(resp.status, data, dict(resp.headers))

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> OutboundClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
