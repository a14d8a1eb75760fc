"""Ownership: another account's resource answers 404, exactly like a missing one.

Every route that takes a resource id does::

    domain = owned(await store.get_domain(conn, parse_id(request, "domain_id")), auth, "domain")

``parse_id`` answers 404 for an id that cannot exist (not a UUID), so a
malformed id and a foreign id are indistinguishable from a missing one.
Prefer store queries that also filter by ``account_id``; ``owned`` is the
check that stays right when a row is loaded by id alone.
"""

from __future__ import annotations

import uuid
from typing import Protocol, TypeVar

from aiohttp import web

from mail.errors import not_found


class Owner(Protocol):
    """An account, or anything with the owning account's id."""

    @property
    def id(self) -> str: ...


class Owned(Protocol):
    """A record carrying its owning account's id."""

    @property
    def account_id(self) -> str: ...


T = TypeVar("T")
R = TypeVar("R", bound=Owned)


def parse_id(request: web.Request, name: str, what: str | None = None) -> str:
    """The path parameter ``name`` as a canonical UUID string, or 404."""
    raw = request.match_info.get(name, "")
    return parse_uuid(raw, what or name.removesuffix("_id"))


def parse_uuid(raw: str, what: str) -> str:
    try:
        return str(uuid.UUID(raw))
    except ValueError:
        raise not_found(what) from None


def found(row: T | None, what: str) -> T:
    """``row``, or 404 when a query that already filters by owner found none."""
    if row is None:
        raise not_found(what)
    return row


def owned(row: R | None, owner: Owner, what: str) -> R:
    """``row`` if it exists and belongs to ``owner`` (an account); otherwise 404."""
    if row is None or str(row.account_id) != str(owner.id):
        raise not_found(what)
    return row
