"""The DNS lookups SPF, DKIM and DMARC need, through one configurable resolver.

DNS_RESOLVERS (parsed by common/mail_settings.py, each server with its port)
points it at given servers (tests run one on the loopback); unset, the
system's resolv.conf is used.
A missing name or record is an empty answer; a timeout or server failure is a
:class:`TempError` (the checks turn it into ``temperror``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import dns.asyncresolver
import dns.exception
import dns.message
import dns.name
import dns.nameserver
import dns.rdatatype
import dns.resolver
import dns.reversename

from common.mail_settings import Nameserver

CACHE_SIZE = 10_000
# A negative answer without an SOA to say how long it holds is not kept.
NEGATIVE_TTL_CAP = 3600


class TempError(Exception):
    """The DNS could not answer now."""


class Resolver:
    def __init__(
        self,
        servers: Sequence[Nameserver] = (),
        *,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clock = clock
        if servers:
            self._resolver = dns.asyncresolver.Resolver(configure=False)
            self._resolver.nameservers = [
                dns.nameserver.Do53Nameserver(server.address, server.port) for server in servers
            ]
        else:
            try:
                self._resolver = dns.asyncresolver.Resolver()
            except dns.resolver.NoResolverConfiguration:
                self._resolver = dns.asyncresolver.Resolver(configure=False)
                self._resolver.nameservers = ["127.0.0.1"]
        self._resolver.lifetime = timeout
        self._resolver.timeout = timeout
        # Answers are kept for their TTL, "no such name/record" for the SOA's
        # minimum (RFC 2308): mail from one sender domain comes in bursts, and SPF
        # and DMARC ask the same names for each message. The cache is ours rather
        # than dnspython's: even a hit through its resolve() costs ~0.1 ms of
        # Python, and ours reads time from an injectable clock.
        self._answers: dict[tuple[str, str], tuple[float, list[object]]] = {}

    async def _query(self, name: str, rdtype: str) -> list[object]:
        key = (name.lower(), rdtype)
        cached = self._answers.get(key)
        if cached is not None and cached[0] > self._clock():
            return cached[1]
        records, ttl = await self._resolve(name, rdtype)
        if ttl > 0:
            if len(self._answers) >= CACHE_SIZE:
                self._answers.clear()
            self._answers[key] = (self._clock() + ttl, records)
        return records

    async def _resolve(self, name: str, rdtype: str) -> tuple[list[object], float]:
        """The records and how many seconds they may be kept."""
        try:
            answer = await self._resolver.resolve(name, rdtype, search=False)
        except dns.resolver.NXDOMAIN as exc:
            return [], _negative_ttl(list(exc.responses().values()))
        except dns.resolver.NoAnswer as exc:
            return [], _negative_ttl([exc.response()])
        except dns.resolver.NoNameservers as exc:
            raise TempError(f"{name} {rdtype}: no server answered") from exc
        except (dns.exception.Timeout, dns.resolver.LifetimeTimeout) as exc:
            raise TempError(f"{name} {rdtype}: timeout") from exc
        except (dns.name.EmptyLabel, dns.name.LabelTooLong, dns.name.NameTooLong):
            return [], 0.0  # a name that cannot exist has no records
        except dns.exception.DNSException as exc:
            raise TempError(f"{name} {rdtype}: {exc}") from exc
        return list(answer), answer.expiration - time.time()

    async def txt(self, name: str) -> list[str]:
        records = await self._query(name, "TXT")
        return [
            b"".join(r.strings).decode("utf-8", errors="replace")  # type: ignore[attr-defined]
            for r in records
        ]

    async def addresses(self, name: str, version: int) -> list[str]:
        records = await self._query(name, "A" if version == 4 else "AAAA")
        return [r.address for r in records]  # type: ignore[attr-defined]

    async def mx(self, name: str) -> list[str]:
        records = await self._query(name, "MX")
        ordered = sorted(records, key=lambda r: r.preference)  # type: ignore[attr-defined]
        return [r.exchange.to_text().rstrip(".") for r in ordered]  # type: ignore[attr-defined]

    async def ptr(self, ip: str) -> list[str]:
        records = await self._query(dns.reversename.from_address(ip).to_text(), "PTR")
        return [r.target.to_text().rstrip(".") for r in records]  # type: ignore[attr-defined]


def _negative_ttl(responses: list[dns.message.Message]) -> float:
    """How long "no such record" holds: the SOA's TTL capped by its minimum (RFC 2308 5)."""
    ttls = []
    for response in responses:
        for rrset in response.authority:
            if rrset.rdtype == dns.rdatatype.SOA and len(rrset):
                ttls.append(min(rrset.ttl, rrset[0].minimum))  # type: ignore[attr-defined]
    return float(min(min(ttls), NEGATIVE_TTL_CAP)) if ttls else 0.0
