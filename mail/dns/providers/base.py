"""What every DNS provider's publisher does, and how its failures reach the client.

A publisher receives the domain, its record set and the API token the
operator posted. The token lives only in that call's arguments and the
outgoing request's header: it is never stored, never logged, and never part
of an exception message or chain (exceptions are raised ``from None``).

Publishing creates only the records that are *missing* at the provider; a
record published there with another value (``mismatch``) is left alone and
reported, because overwriting an operator's MX or SPF is not ours to decide.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from mail.dns import status
from mail.dns.records import Record
from mail.errors import MailError, validation_error


class ProviderError(Exception):
    """A provider refused or failed. ``kind``: auth, zone, rejected or unavailable."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message

    def to_mail_error(self) -> MailError:
        if self.kind == "unavailable":
            # The panel is fine; the provider is not. 502, in the mail error shape.
            return MailError("application_error", self.message, status=502)
        return validation_error(self.message)


@dataclass
class PublishResult:
    provider: str
    zone: str
    created: list[Record] = field(default_factory=list)
    already_present: list[Record] = field(default_factory=list)
    # Published at the provider with another value: not touched.
    conflicting: list[Record] = field(default_factory=list)


@dataclass(frozen=True)
class Plan:
    create: list[Record]
    present: list[Record]
    conflicting: list[Record]


def plan(records: Sequence[Record], existing: Mapping[str, Sequence[str]]) -> Plan:
    """Split the record set by what the provider already has (keyed ``TYPE name``)."""
    create: list[Record] = []
    present: list[Record] = []
    conflicting: list[Record] = []
    for record in records:
        verdict = status.evaluate(record, list(existing.get(record.key, ())))
        if verdict == status.VERIFIED:
            present.append(record)
        elif verdict == status.MISMATCH or (
            # A CNAME cannot share its name with any other record (RFC 1034 3.6.2).
            record.type == "CNAME"
            and any(k.endswith(f" {record.name}") and existing[k] for k in existing)
        ):
            conflicting.append(record)
        else:
            create.append(record)
    return Plan(create, present, conflicting)


class Publisher(Protocol):
    provider_id: str

    async def publish(
        self, domain: str, records: Sequence[Record], api_token: str
    ) -> PublishResult:
        """Create the missing records in the zone holding ``domain``."""
        ...
