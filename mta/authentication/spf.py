"""SPF, RFC 7208: may this IP send mail for this domain?

``check_host`` follows section 4 with the limits of section 4.6.4 (10 DNS
mechanisms, 2 void lookups) and the macros of section 7. ``ptr`` (which the
RFC says not to use) never matches, and the ``exp`` explanation is not fetched.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

from mta.authentication.dns import Resolver, TempError

MAX_LOOKUPS = 10
MAX_VOID = 2
MAX_MX = 10

_QUALIFIERS = {"+": "pass", "-": "fail", "~": "softfail", "?": "neutral"}
_MACRO = re.compile(r"%\{([slodiphcrtvSLODIPHCRTV])(\d*)(r?)([.\-+,/_=]*)\}|%%|%_|%-")
_CIDR = re.compile(r"^(.*?)(?:/(\d+))?(?://(\d+))?$")


class PermError(Exception):
    pass


@dataclass
class _State:
    lookups: int = 0
    void: int = 0
    seen: set[str] = field(default_factory=set)

    def count(self) -> None:
        self.lookups += 1
        if self.lookups > MAX_LOOKUPS:
            raise PermError("too many DNS lookups")


@dataclass(frozen=True)
class SpfResult:
    result: str  # pass fail softfail neutral none temperror permerror
    domain: str
    reason: str = ""


async def check(resolver: Resolver, ip: str, mail_from: str, helo: str) -> SpfResult:
    """The SPF result for MAIL FROM (or postmaster@HELO for a null sender, section 2.4)."""
    sender = mail_from or f"postmaster@{helo}"
    domain = sender.rpartition("@")[2].lower().rstrip(".")
    if not domain or "." not in domain:
        return SpfResult("none", domain, "no domain to check")
    try:
        result = await _check_host(
            resolver, ipaddress.ip_address(ip), domain, sender, helo, _State()
        )
    except TempError as exc:
        return SpfResult("temperror", domain, str(exc))
    except PermError as exc:
        return SpfResult("permerror", domain, str(exc))
    return SpfResult(result, domain)


async def _record(resolver: Resolver, domain: str, state: _State) -> str | None:
    txts = await resolver.txt(domain)
    records = [t for t in txts if t.lower() == "v=spf1" or t.lower().startswith("v=spf1 ")]
    if len(records) > 1:
        raise PermError(f"{domain} has more than one SPF record")
    return records[0] if records else None


async def _check_host(
    resolver: Resolver,
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address,
    domain: str,
    sender: str,
    helo: str,
    state: _State,
) -> str:
    record = await _record(resolver, domain, state)
    if record is None:
        return "none"
    terms = record.split()[1:]
    redirect: str | None = None
    for term in terms:
        name, eq, value = term.partition("=")
        if eq and re.fullmatch(r"[A-Za-z][\w.-]*", name):
            if name.lower() == "redirect":
                redirect = value
            continue  # exp and unknown modifiers are ignored (section 6)
        qualifier = "+"
        if term[0] in _QUALIFIERS:
            qualifier, term = term[0], term[1:]
        if await _matches(resolver, ip, domain, sender, helo, state, term):
            return _QUALIFIERS[qualifier]
    if redirect is not None:
        state.count()
        target = _expand(redirect, ip, domain, sender, helo)
        result = await _check_host(resolver, ip, target, sender, helo, state)
        if result == "none":
            raise PermError(f"redirect to {target} found no SPF record")
        return result
    return "neutral"


async def _matches(
    resolver: Resolver,
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address,
    domain: str,
    sender: str,
    helo: str,
    state: _State,
    term: str,
) -> bool:
    mech, _, arg = term.partition(":")
    mech = mech.lower()
    if "/" in mech:  # "a/24" and "mx/24" carry their CIDR without a colon
        mech, _slash, rest = mech.partition("/")
        arg = f"{arg}/{rest}" if arg else f"/{rest}"
    if mech == "all":
        return True
    if mech in ("ip4", "ip6"):
        try:
            network = ipaddress.ip_network(arg, strict=False)
        except ValueError as exc:
            raise PermError(f"bad {mech} network {arg!r}") from exc
        return ip.version == network.version and ip in network
    if mech == "include":
        state.count()
        target = _expand(arg, ip, domain, sender, helo)
        result = await _check_host(resolver, ip, target, sender, helo, state)
        if result == "pass":
            return True
        if result in ("fail", "softfail", "neutral"):
            return False
        if result == "temperror":
            raise TempError(f"include:{target}")
        raise PermError(f"include:{target} gave {result}")
    if mech in ("a", "mx"):
        state.count()
        host_part, cidr4, cidr6 = _CIDR.match(arg).groups()  # type: ignore[union-attr]
        target = _expand(host_part, ip, domain, sender, helo) if host_part else domain
        prefix = int(cidr4 or 32) if ip.version == 4 else int(cidr6 or 128)
        hosts = [target]
        if mech == "mx":
            hosts = (await resolver.mx(target))[:MAX_MX]
            if not hosts:
                _void(state)
        for host in hosts:
            addresses = await resolver.addresses(host, ip.version)
            if not addresses and mech == "a":
                _void(state)
            for address in addresses:
                if ip in ipaddress.ip_network(f"{address}/{prefix}", strict=False):
                    return True
        return False
    if mech == "exists":
        state.count()
        target = _expand(arg, ip, domain, sender, helo)
        found = await resolver.addresses(target, 4)
        if not found:
            _void(state)
        return bool(found)
    if mech == "ptr":
        state.count()
        return False
    raise PermError(f"unknown mechanism {mech!r}")


def _void(state: _State) -> None:
    state.void += 1
    if state.void > MAX_VOID:
        raise PermError("too many void DNS lookups")


def _expand(
    spec: str,
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address,
    domain: str,
    sender: str,
    helo: str,
) -> str:
    """Macro expansion, RFC 7208 section 7."""
    local, _, sender_domain = sender.rpartition("@")
    i_value = str(ip) if ip.version == 4 else ".".join(ip.exploded.replace(":", ""))
    values = {
        "s": sender,
        "l": local or "postmaster",
        "o": sender_domain,
        "d": domain,
        "i": i_value,
        "p": "unknown",
        "v": "in-addr" if ip.version == 4 else "ip6",
        "h": helo,
        "c": str(ip),
        "r": "unknown",
        "t": "0",
    }

    def replace(m: re.Match[str]) -> str:
        whole = m.group(0)
        if whole == "%%":
            return "%"
        if whole == "%_":
            return " "
        if whole == "%-":
            return "%20"
        letter, digits, reverse, delimiters = m.groups()
        parts = re.split("[" + re.escape(delimiters or ".") + "]", values[letter.lower()])
        if reverse:
            parts.reverse()
        if digits:
            parts = parts[-int(digits) :] if int(digits) else parts
        return ".".join(parts)

    if "%" in spec and not _MACRO.search(spec):
        raise PermError(f"bad macro in {spec!r}")
    return _MACRO.sub(replace, spec).rstrip(".").lower()
