"""DMARC (RFC 7489, with the DNS tree walk of DMARCbis instead of a suffix list).

The author domain is the RFC5322.From domain. Its policy record is found by
walking up its labels (``_dmarc.<domain>``), at most 8 queries. The
organizational domain is the highest domain on that walk with a DMARC
record (or the author domain itself); SPF and DKIM results align in relaxed
mode when their domain shares that organizational domain, in strict mode when
it equals the author domain.
"""

from __future__ import annotations

from dataclasses import dataclass

from mta.authentication.dkim import DkimResult
from mta.authentication.dns import Resolver, TempError
from mta.authentication.spf import SpfResult

MAX_WALK = 8


@dataclass(frozen=True)
class DmarcResult:
    result: str  # pass fail none temperror permerror
    domain: str
    policy: str = "none"  # none quarantine reject: the policy that applies to this message
    reason: str = ""

    @property
    def rejects(self) -> bool:
        return self.result == "fail" and self.policy == "reject"

    @property
    def quarantines(self) -> bool:
        return self.result == "fail" and self.policy == "quarantine"


def _parse(record: str) -> dict[str, str] | None:
    tags: dict[str, str] = {}
    for part in record.split(";"):
        key, eq, value = part.strip().partition("=")
        if eq:
            tags[key.strip().lower()] = value.strip()
    if tags.get("v") != "DMARC1":
        return None
    return tags


async def _records(resolver: Resolver, domain: str) -> list[tuple[str, dict[str, str]]]:
    """(domain, tags) for each domain on the walk up from ``domain`` with one record."""
    labels = domain.split(".")
    found = []
    # The full name, then its parents, stopping above the TLD and after MAX_WALK names.
    for start in range(min(len(labels) - 1, MAX_WALK)):
        name = ".".join(labels[start:])
        records = [t for t in (_parse(r) for r in await resolver.txt(f"_dmarc.{name}")) if t]
        if len(records) == 1:
            found.append((name, records[0]))
    return found


def _aligned(domain: str, author: str, org: str, strict: bool) -> bool:
    domain = domain.lower().rstrip(".")
    if strict:
        return domain == author
    return domain == org or domain.endswith("." + org)


async def evaluate(
    resolver: Resolver, from_domain: str, spf: SpfResult, dkim: list[DkimResult]
) -> DmarcResult:
    author = from_domain.lower().rstrip(".")
    if not author or "." not in author:
        return DmarcResult("none", author, reason="no From domain")
    try:
        found = await _records(resolver, author)
    except TempError as exc:
        return DmarcResult("temperror", author, reason=str(exc))
    if not found:
        return DmarcResult("none", author)
    policy_domain, tags = found[0]
    org = found[-1][0]
    policy = tags.get("p", "none").lower()
    if policy_domain != author:
        policy = tags.get("sp", policy).lower()
    if policy not in ("none", "quarantine", "reject"):
        policy = "none"
    spf_strict = tags.get("aspf", "r").lower() == "s"
    dkim_strict = tags.get("adkim", "r").lower() == "s"
    spf_ok = spf.result == "pass" and _aligned(spf.domain, author, org, spf_strict)
    dkim_ok = any(d.result == "pass" and _aligned(d.domain, author, org, dkim_strict) for d in dkim)
    if spf_ok or dkim_ok:
        return DmarcResult("pass", author, policy)
    return DmarcResult("fail", author, policy, "neither SPF nor DKIM aligned and passed")
