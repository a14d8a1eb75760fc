"""Whether what DNS answers matches what a record should be.

Statuses:

* ``verified``: a published value matches the expected one;
* ``mismatch``: a record of the same kind is published with another value
  (an MX to another host, another SPF policy, an old DKIM key...);
* ``missing``: nothing of that kind is published;
* ``error``: the lookup itself failed (timeout, SERVFAIL), so we cannot say;
* ``unchecked``: no check has run since the record was added.

Matching is by meaning, not by bytes: names compare case-insensitively and
absolute, TXT whitespace and string splits do not matter, and tagged TXT
records (DKIM, DMARC, MTA-STS, TLS-RPT) match when every expected tag has the
expected value, so an operator may add tags such as a DMARC ``rua=``.
"""

from __future__ import annotations

from collections.abc import Sequence

from mail.dns.records import Record

VERIFIED = "verified"
MISMATCH = "mismatch"
MISSING = "missing"
ERROR = "error"
UNCHECKED = "unchecked"

# TXT records whose first tag says what they are; other TXT at the same name don't count.
_TAGGED_VERSIONS = ("v=spf1", "v=dkim1", "v=dmarc1", "v=stsv1", "v=tlsrptv1")


def normalize_found(rtype: str, value: str) -> str:
    """A found value in the same form as the expected one."""
    if rtype == "TXT":
        return value
    return " ".join(value.lower().split())


def _tags(text: str) -> dict[str, str]:
    tags: dict[str, str] = {}
    for part in text.split(";"):
        key, sep, value = part.partition("=")
        if sep:
            tags[key.strip().lower()] = "".join(value.split())
    return tags


def _txt_kind(text: str) -> str:
    head = "".join(text.split()).lower()
    for version in _TAGGED_VERSIONS:
        if head.startswith(version):
            return version
    return ""


def _txt_matches(expected: str, found: str) -> bool:
    if _txt_kind(expected) == "v=spf1":
        return expected.lower().split() == found.lower().split()
    want, have = _tags(expected), _tags(found)
    if not want:
        return expected == found
    return all(have.get(k) == v for k, v in want.items())


def matches(record: Record, found: str) -> bool:
    if record.type == "TXT":
        return _txt_matches(record.value, found)
    return normalize_found(record.type, record.value) == normalize_found(record.type, found)


def related(record: Record, found: str) -> bool:
    """Whether a published value is an attempt at this record (vs. unrelated TXT)."""
    if record.type != "TXT":
        return True
    kind = _txt_kind(record.value)
    if record.purpose == "dkim":
        # Anything at <selector>._domainkey is meant to be this key.
        return True
    return _txt_kind(found) == kind


def evaluate(record: Record, found: Sequence[str] | None) -> str:
    if found is None:
        return ERROR
    if any(matches(record, value) for value in found):
        return VERIFIED
    if any(related(record, value) for value in found):
        return MISMATCH
    return MISSING


def overall(statuses: Sequence[str]) -> str:
    """The domain's DNS status: verified only when every record is."""
    if not statuses or UNCHECKED in statuses:
        return UNCHECKED
    if all(s == VERIFIED for s in statuses):
        return VERIFIED
    return "incomplete"
