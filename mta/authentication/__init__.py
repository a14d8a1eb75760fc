"""Inbound email authentication: SPF (RFC 7208), DKIM (RFC 6376), DMARC (RFC 7489).

Each check is a plain async function over a :class:`~mta.authentication.dns.Resolver`;
:func:`evaluate` runs all three for one message, and
:func:`mta.authentication.results.header` writes the Authentication-Results field.
"""

from __future__ import annotations

import asyncio
import email.utils
from dataclasses import dataclass
from email import policy
from email.parser import BytesHeaderParser

from mta.authentication import dkim, dmarc, spf
from mta.authentication.dns import Resolver
from mta.message import split_head


@dataclass(frozen=True)
class Verdict:
    spf: spf.SpfResult
    dkim: list[dkim.DkimResult]
    dmarc: dmarc.DmarcResult


def from_domain(raw: bytes) -> str:
    """The RFC5322.From domain (the DMARC author domain); "" when there is not exactly one."""
    try:
        # Only the header block: the parser would otherwise walk every body line.
        headers = BytesHeaderParser(policy=policy.compat32).parsebytes(split_head(raw)[0])
        values = headers.get_all("From") or []
    except Exception:
        return ""
    addresses = [a for _n, a in email.utils.getaddresses([str(v) for v in values]) if a]
    if len(addresses) != 1:
        return ""
    return addresses[0].rpartition("@")[2].lower()


def author_domain(from_addresses: list[dict[str, str]]) -> str:
    """from_domain over an already parsed From (ParsedMessage.from_addrs)."""
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
    author: str | None = None,
) -> Verdict:
    """SPF, DKIM and DMARC; ``author`` is the From domain when the caller has parsed it."""
    spf_result, dkim_results = await asyncio.gather(
        spf.check(resolver, ip, mail_from, helo), dkim.verify(resolver, raw)
    )
    if author is None:
        author = from_domain(raw)
    dmarc_result = await dmarc.evaluate(resolver, author, spf_result, dkim_results)
    return Verdict(spf_result, dkim_results, dmarc_result)
