"""Where mail for a domain goes: the relay, its MX hosts, or its address (RFC 5321 5.1).

* OUTBOUND_RELAY set: everything to that smarthost (a sandbox without internet).
* MX records, by preference; a null MX (one MX ".", RFC 7505) means the domain
  takes no mail: a permanent failure (556 5.1.10), no fallback.
* No MX: the domain's own A/AAAA (the implicit MX); none either: permanent.
* A DNS timeout or server failure: temporary (the recipient is retried).
* MTA-STS (RFC 8461, mta/outbound/mtasts.py): an enforced policy keeps only the
  MX hosts it lists and requires a verified TLS certificate on them.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from mta.authentication.dns import Resolver, TempError
from mta.outbound.mtasts import PolicyCache


@dataclass(frozen=True)
class Host:
    name: str
    addresses: tuple[str, ...]


@dataclass(frozen=True)
class Route:
    # Whom the concurrency bound and connection reuse are counted against.
    key: str
    hosts: tuple[Host, ...]
    port: int
    # MTA-STS enforce: STARTTLS with a certificate valid for the host name.
    require_tls: bool = False


class RouteFailure(Exception):
    def __init__(self, reply: str, *, permanent: bool) -> None:
        super().__init__(reply)
        self.reply = reply
        self.permanent = permanent


async def _addresses(resolver: Resolver, name: str) -> tuple[str, ...]:
    found = await resolver.addresses(name, 4)
    with contextlib.suppress(TempError):  # IPv4 is enough to go on
        found += await resolver.addresses(name, 6)
    return tuple(found)


async def route(
    resolver: Resolver,
    domain: str,
    *,
    relay: tuple[str, int] | None,
    port: int,
    policies: PolicyCache | None,
) -> Route:
    if relay is not None:
        host, relay_port = relay
        return Route(
            key=f"relay:{host}:{relay_port}", hosts=(Host(host, (host,)),), port=relay_port
        )
    try:
        exchanges = await resolver.mx(domain)
        if exchanges and all(name in ("", ".") for name in exchanges):
            raise RouteFailure(
                f"556 5.1.10 {domain} accepts no mail (null MX, RFC 7505)", permanent=True
            )
        names = [name for name in exchanges if name not in ("", ".")] or [domain]
        policy = await policies.get(domain) if policies is not None else None
        require_tls = policy is not None and policy.mode == "enforce"
        if require_tls and policy is not None:
            names = [name for name in names if policy.matches(name)]
            if not names:
                raise RouteFailure(
                    f"451 4.7.5 no MX of {domain} matches its MTA-STS policy", permanent=False
                )
        hosts = []
        for name in names:
            addresses = await _addresses(resolver, name)
            if addresses:
                hosts.append(Host(name, addresses))
    except TempError as exc:
        raise RouteFailure(f"451 4.4.3 DNS lookup failed: {exc}", permanent=False) from exc
    if not hosts:
        if exchanges:
            raise RouteFailure(
                f"451 4.4.4 no address for the MX hosts of {domain}", permanent=False
            )
        raise RouteFailure(f"550 5.1.2 {domain} has no MX and no address", permanent=True)
    return Route(key=f"domain:{domain}", hosts=tuple(hosts), port=port, require_tls=require_tls)
