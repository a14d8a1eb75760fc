"""The record set as an RFC 1035 zone-file fragment, for import into a DNS host.

There is no SOA or NS: those belong to whoever hosts the zone, and every DNS
host's import (BIND ``$INCLUDE``, Cloudflare, Route 53) takes a fragment.
dnspython reads it back with ``dns.zone.from_text(text, origin, check_origin=False)``.
"""

from __future__ import annotations

from collections.abc import Sequence

from mail.dns.records import Record


def relative_name(name: str, origin: str) -> str:
    if name == origin:
        return "@"
    return name.removesuffix(f".{origin}")


def zone_text(origin: str, records: Sequence[Record], *, generated_by: str = "") -> str:
    width = max((len(relative_name(r.name, origin)) for r in records), default=1)
    lines = [f"; Mail DNS records for {origin}"]
    if generated_by:
        lines.append(f"; {generated_by}")
    lines += [f"$ORIGIN {origin}.", ""]
    for record in records:
        lines.append(
            f"{relative_name(record.name, origin):<{width}}  {record.ttl}  IN  "
            f"{record.type:<5}  {record.rdata_text}"
        )
    return "\n".join(lines) + "\n"
