"""The client's IP address, believing X-Forwarded-For only from trusted proxies."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from aiohttp import web

from common.settings import Network


def _parse(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    value = value.strip()
    if value.startswith("[") and "]" in value:  # [v6]:port
        value = value[1 : value.index("]")]
    elif value.count(":") == 1:  # v4:port
        value = value.split(":", 1)[0]
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        return None


def _trusted(addr: ipaddress.IPv4Address | ipaddress.IPv6Address, nets: Sequence[Network]) -> bool:
    return any(addr in net for net in nets)


def resolve_client_ip(
    peer: str | None, forwarded_for: str | None, trusted: Sequence[Network]
) -> str:
    """Walk X-Forwarded-For right to left past trusted proxies.

    The rightmost entries were appended by our own proxies; the first address
    not in TRUSTED_PROXIES is the client. Entries further left were written by
    the client itself and are never believed.
    """
    peer_addr = _parse(peer or "")
    if peer_addr is None:
        return peer or "unknown"
    if not trusted or not forwarded_for or not _trusted(peer_addr, trusted):
        return str(peer_addr)
    hops = [h for h in forwarded_for.split(",") if h.strip()]
    client = peer_addr
    for hop in reversed(hops):
        addr = _parse(hop)
        if addr is None:
            break
        client = addr
        if not _trusted(addr, trusted):
            break
    return str(client)


def client_ip(request: web.Request, trusted: Sequence[Network]) -> str:
    return resolve_client_ip(request.remote, request.headers.get("X-Forwarded-For"), trusted)
