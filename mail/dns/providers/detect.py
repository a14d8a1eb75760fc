"""Which DNS host serves a domain, told by the names of its NS records."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Provider:
    id: str
    name: str
    # NS host names end with one of these (matched on label boundaries).
    ns_suffixes: tuple[str, ...]


PROVIDERS: tuple[Provider, ...] = (
    Provider("cloudflare", "Cloudflare", ("ns.cloudflare.com",)),
    Provider(
        "route53",
        "Amazon Route 53",
        ("awsdns-*.com", "awsdns-*.net", "awsdns-*.org", "awsdns-*.co.uk"),
    ),
    Provider("google", "Google Cloud DNS", ("googledomains.com",)),
    Provider("digitalocean", "DigitalOcean", ("digitalocean.com",)),
    Provider(
        "hetzner",
        "Hetzner",
        ("ns.hetzner.com", "ns.hetzner.de", "first-ns.de", "second-ns.de", "second-ns.com"),
    ),
    Provider("ovh", "OVH", ("ovh.net", "ovh.ca", "anycast.me")),
    Provider("namecheap", "Namecheap", ("registrar-servers.com", "namecheaphosting.com")),
    Provider("godaddy", "GoDaddy", ("domaincontrol.com",)),
)
UNKNOWN = Provider("unknown", "Unknown", ())


def _label_match(host_labels: list[str], pattern_labels: list[str]) -> bool:
    if len(host_labels) < len(pattern_labels):
        return False
    tail = host_labels[len(host_labels) - len(pattern_labels) :]
    for have, want in zip(tail, pattern_labels, strict=True):
        if want.endswith("*"):
            if not have.startswith(want[:-1]):
                return False
        elif have != want:
            return False
    return True


def provider_for_ns(nameserver: str) -> Provider:
    labels = nameserver.lower().rstrip(".").split(".")
    for provider in PROVIDERS:
        if any(_label_match(labels, suffix.split(".")) for suffix in provider.ns_suffixes):
            return provider
    return UNKNOWN


def detect(nameservers: Sequence[str]) -> Provider:
    """The provider every (or most) NS records point at; unknown when none match."""
    counts: dict[str, int] = {}
    by_id: dict[str, Provider] = {}
    for ns in nameservers:
        provider = provider_for_ns(ns)
        if provider is not UNKNOWN:
            counts[provider.id] = counts.get(provider.id, 0) + 1
            by_id[provider.id] = provider
    if not counts:
        return UNKNOWN
    return by_id[max(counts, key=lambda pid: counts[pid])]


def by_id(provider_id: str) -> Provider | None:
    for provider in PROVIDERS:
        if provider.id == provider_id:
            return provider
    return None
