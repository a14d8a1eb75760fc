"""MTA-STS (RFC 8461): the policy file and the id that announces it.

The policy is served at ``https://mta-sts.<domain>/.well-known/mta-sts.txt``;
``_mta-sts.<domain>`` TXT carries ``v=STSv1; id=<id>``. Senders cache a
policy until the id changes, so the id is derived from the policy's own text:
any change of mode, mx or max_age changes the id, and the DNS check then shows
the TXT record as a mismatch until the operator publishes the new one.
"""

from __future__ import annotations

from collections.abc import Sequence

from common.crypto import sha256_hex

VERSION = "STSv1"
# RFC 8461 3.1: id is 1 to 32 alphanumeric characters.
ID_LENGTH = 20


def policy_text(*, mode: str, mx_hosts: Sequence[str], max_age: int) -> str:
    """The policy body; RFC 8461 3.2 separates fields with CRLF."""
    lines = [f"version: {VERSION}", f"mode: {mode}"]
    lines += [f"mx: {host.rstrip('.')}" for host in mx_hosts]
    lines.append(f"max_age: {max_age}")
    return "".join(f"{line}\r\n" for line in lines)


def policy_id(policy: str) -> str:
    return sha256_hex(policy)[:ID_LENGTH]


def txt_record(policy: str) -> str:
    return f"v={VERSION}; id={policy_id(policy)}"


def parse_policy(text: str) -> dict[str, list[str]]:
    """Fields of a policy, each possibly repeated (mx); for tests and checks."""
    fields: dict[str, list[str]] = {}
    for line in text.replace("\r\n", "\n").split("\n"):
        if not line:
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"not a key: value line: {line!r}")
        fields.setdefault(key.strip(), []).append(value.strip())
    return fields
