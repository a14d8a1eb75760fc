"""Inbound email authentication: SPF (RFC 7208), DKIM (RFC 6376), DMARC (RFC 7489).

Each check is a plain async function over a :class:`~mta.authentication.dns.Resolver`;
:func:`evaluate` runs all three for one message, and
:func:`mta.authentication.results.header` writes the Authentication-Results field.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from mta.authentication import dkim, dmarc, spf
from mta.authentication.dns import Resolver


@dataclass(frozen=True)
class Verdict:
    spf: spf.SpfResult
    dkim: list[dkim.DkimResult]
    dmarc: dmarc.DmarcResult


def author_domain(from_addresses: list[dict[str, str]]) -> str:
    """The RFC5322.From domain (the DMARC author domain) of a parsed message's From
    (ParsedMessage.from_addrs); "" when there is not exactly one address."""
    if len(from_addresses) != 1:
        return ""
    return from_addresses[0]["email"].rpartition("@")[2].lower()


async def evaluate(
    resolver: Resolver,
    raw: bytes,
    ip: str,
    mail_from: str,
    helo: str,
    *,
    author: str,
) -> Verdict:
    """SPF, DKIM and DMARC; ``author`` is the From domain (:func:`author_domain`)."""
    spf_result, dkim_results = await asyncio.gather(
        spf.check(resolver, ip, mail_from, helo), dkim.verify(resolver, raw)
    )
    dmarc_result = await dmarc.evaluate(resolver, author, spf_result, dkim_results)
    return Verdict(spf_result, dkim_results, dmarc_result)
