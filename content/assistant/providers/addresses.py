"""Which addresses a provider's base URL may reach: the assistant's SSRF rule.

A self-hosted CMS talks to two sorts of model server, and the rule follows:

- The local runtime (kind ``ollama``) is meant to be near: loopback (its
  default, http://127.0.0.1:11434) and private networks (a GPU box on the LAN)
  are allowed. Never allowed: link-local addresses (169.254.0.0/16, fe80::/10,
  where cloud metadata services answer, 169.254.169.254 and fd00:ec2::254
  included), multicast, unspecified and reserved addresses.
- The hosted kinds (``openai``, ``anthropic``) carry an API key, so their
  address must be https and must resolve only to public addresses, as webhook
  targets must (common/outbound.py); WEBHOOK_ALLOW_PRIVATE, the deployment's
  one switch for outbound calls to private networks, lifts that (development,
  tests, an OpenAI-compatible gateway on the LAN).
- The hosted variant of the runtime (``ollama-cloud``) has a fixed address.

The URL is judged when saved (:func:`url_problem`), its name resolved and
judged again before every call (:func:`check_reachable`, for a clear early
answer), and every address a connection is actually opened to judged at
connect (transport.py), so a name re-pointed at a forbidden address
afterwards, even between the check and the connect (DNS rebinding), is
refused too.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from urllib.parse import urlsplit

from common.outbound import is_public_address

MAX_URL = 500
_METADATA = {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}


def allowed_address(kind: str, value: str, *, allow_private: bool) -> bool:
    ip = ipaddress.ip_address(value.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip in _METADATA or ip.is_link_local or ip.is_multicast or ip.is_unspecified:
        return False
    if kind == "ollama" or allow_private:
        return not ip.is_reserved or ip.is_loopback or ip.is_private
    return is_public_address(ip)


def url_problem(kind: str, value: object, *, allow_private: bool) -> str | None:
    """Why ``value`` cannot be this kind's base URL, or None."""
    if not isinstance(value, str) or not value or len(value) > MAX_URL:
        return f"must be an http or https URL of at most {MAX_URL} characters"
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "must be an http or https URL"
    if parts.username or parts.password or parts.query or parts.fragment:
        return "must be a plain base URL: no credentials, query or fragment"
    if kind != "ollama" and not allow_private and parts.scheme != "https":
        return "a hosted provider is reached over https"
    try:
        literal = ipaddress.ip_address(parts.hostname)
    except ValueError:
        literal = None
    if literal is not None and not allowed_address(kind, str(literal), allow_private=allow_private):
        return _refusal(kind)
    if literal is None and parts.hostname == "localhost" and kind != "ollama" and not allow_private:
        return _refusal(kind)
    return None


def _refusal(kind: str) -> str:
    if kind == "ollama":
        return "link-local, metadata, multicast and unspecified addresses are refused"
    return "a hosted provider must be on a public address"


async def resolve(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to, in the resolver's order (one resolver for check and connect)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def check_reachable(kind: str, url: str, *, allow_private: bool) -> str | None:
    """Resolve the URL's host now; why it may not be called, or None."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        addresses = await resolve(host, port)
    except OSError:
        return None  # unresolvable: the call itself fails as unreachable
    return resolved_problem(kind, host, addresses, allow_private=allow_private)


def resolved_problem(
    kind: str, host: str, addresses: list[str], *, allow_private: bool
) -> str | None:
    """Why ``host``, resolved to ``addresses``, may not be reached; one forbidden address is enough."""
    if not addresses or any(
        not allowed_address(kind, a, allow_private=allow_private) for a in addresses
    ):
        return f"{host} resolves to an address this provider may not reach"
    return None
