"""DNS lookups with dnspython against the configured resolvers (DNS_RESOLVERS).

A lookup answers the record values in the form :mod:`mail.dns.status`
compares (``[]`` when the name or type does not exist), or ``None`` when the
resolvers could not be asked or did not answer: "we could not tell" is never
reported as "missing".
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Sequence

import dns.asyncresolver
import dns.exception
import dns.nameserver
import dns.rdatatype
import dns.resolver
from dns.rdata import Rdata

from common.mail_settings import Nameserver

log = logging.getLogger(__name__)

Found = dict[str, list[str] | None]


def rdata_value(rtype: str, rdata: Rdata) -> str:
    """One answer in presentation form; TXT strings joined into the text itself."""
    if rtype == "TXT":
        strings: Iterable[bytes] = rdata.strings  # type: ignore[attr-defined]
        return b"".join(strings).decode("utf-8", errors="replace")
    return rdata.to_text()


class Resolver:
    def __init__(self, nameservers: Sequence[Nameserver], timeout: float) -> None:
        self._nameservers = tuple(nameservers)
        self._timeout = timeout

    def _resolver(self) -> dns.asyncresolver.Resolver:
        # A fresh resolver per check: no cache, so POST check sees changes at once.
        if self._nameservers:
            resolver = dns.asyncresolver.Resolver(configure=False)
            resolver.nameservers = [
                dns.nameserver.Do53Nameserver(ns.address, ns.port) for ns in self._nameservers
            ]
        else:
            resolver = dns.asyncresolver.Resolver()
        resolver.timeout = self._timeout
        resolver.lifetime = self._timeout
        return resolver

    async def lookup(self, name: str, rtype: str) -> list[str] | None:
        try:
            resolver = self._resolver()
        except dns.resolver.NoResolverConfiguration:
            log.warning("no DNS resolver configured; set DNS_RESOLVERS")
            return None
        return await self._lookup(resolver, name, rtype)

    async def _lookup(
        self, resolver: dns.asyncresolver.Resolver, name: str, rtype: str
    ) -> list[str] | None:
        try:
            answer = await resolver.resolve(f"{name}.", rtype, search=False)
        except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
            return []
        except (dns.exception.DNSException, OSError) as exc:
            log.info("DNS lookup of %s %s failed: %s", rtype, name, type(exc).__name__)
            return None
        rrset = answer.rrset
        if rrset is None:
            return []
        # A CNAME chain answers the target's type; only the asked type counts.
        if dns.rdatatype.to_text(rrset.rdtype) != rtype:
            return []
        return [rdata_value(rtype, rdata) for rdata in rrset]

    async def lookup_many(self, wanted: Iterable[tuple[str, str]]) -> Found:
        """Several lookups at once; keyed ``"<TYPE> <name>"``."""
        try:
            resolver = self._resolver()
        except dns.resolver.NoResolverConfiguration:
            log.warning("no DNS resolver configured; set DNS_RESOLVERS")
            return {f"{t} {n}": None for n, t in wanted}
        pairs = list(dict.fromkeys(wanted))
        results = await asyncio.gather(*(self._lookup(resolver, n, t) for n, t in pairs))
        return {f"{t} {n}": r for (n, t), r in zip(pairs, results, strict=True)}
