"""ManageSieve scripts are the panel's filters (docs/mail.md, "ManageSieve").

One script per filter of the signed-in address: the script's name is the
filter's name, its content the filter's Sieve text. RFC 5804 has one active
script; the panel runs every enabled filter in order. So:

* SETACTIVE enables that filter and disables the address's others (SETACTIVE
  "" disables all): after it, exactly what LISTSCRIPTS shows runs.
* LISTSCRIPTS marks ACTIVE the first enabled filter in running order; when
  the panel has enabled several, the others still run but are not marked
  (RFC 5804 allows one mark).
* PUTSCRIPT of a new name adds a disabled filter after the address's others
  (RFC 5804 2.6: a new script is not activated); of an existing name
  replaces its text and keeps it enabled or not.
* Two filters the panel named alike: the first in running order keeps the
  name, each later one is listed as "name (id prefix)" so every script has a
  name of its own.

Every text is compiled by mta/sieve/compiler.py, the panel's validator, and
a new filter needs the plan's ``filters`` feature, as POST /api/filters does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from common.db import Conn
from mail.directory import Principal
from mail.directory.plans import PlanRequired, require_feature
from mta.store import filters
from mta.store.filters import Filter

# The panel's longest filter name (mail/filters/service.py MAX_NAME) and position.
MAX_NAME = 200
MAX_POSITION = 1_000_000


class ScriptError(Exception):
    """A refusal with its RFC 5804 response code (NONEXISTENT, ACTIVE, ...)."""

    def __init__(self, code: str | None, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Named:
    name: str
    filter: Filter
    active: bool


def check_name(name: str) -> None:
    """RFC 5804 1.6: no control characters, not empty; the panel's length."""
    if not name or len(name) > MAX_NAME or name != name.strip():
        raise ScriptError(None, f"a script name is 1 to {MAX_NAME} characters, not blank-padded")
    if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c in "\u2028\u2029" for c in name):
        raise ScriptError(None, "a script name has no control characters")


async def listing(conn: Conn, principal: Principal) -> list[Named]:
    rows = await filters.for_address(conn, principal.address_id)
    first_enabled = next((f.id for f in rows if f.enabled), None)
    seen: set[str] = set()
    out: list[Named] = []
    for row in rows:
        name = row.name if row.name not in seen else f"{row.name} ({row.id[:8]})"
        seen.add(name)
        out.append(Named(name, row, row.id == first_enabled))
    return out


async def find(conn: Conn, principal: Principal, name: str) -> Named | None:
    return next((n for n in await listing(conn, principal) if n.name == name), None)


async def existing(conn: Conn, principal: Principal, name: str) -> Named:
    found = await find(conn, principal, name)
    if found is None:
        raise ScriptError("NONEXISTENT", "there is no script of that name")
    return found


async def put(conn: Conn, principal: Principal, name: str, text: str, now: datetime) -> None:
    """Save ``text`` (already compiled) as script ``name``."""
    check_name(name)
    found = await find(conn, principal, name)
    if found is not None:
        await filters.update(conn, found.filter.id, {"script": text}, now)
        return
    try:
        await require_feature(conn, principal.account_id, "filters")
    except PlanRequired as exc:
        raise ScriptError("QUOTA", exc.message) from None
    rows = await filters.for_address(conn, principal.address_id)
    position = min(MAX_POSITION, max((f.position for f in rows), default=-1) + 1)
    await filters.insert(
        conn,
        account_id=principal.account_id,
        address_id=principal.address_id,
        name=name,
        script=text,
        enabled=False,
        position=position,
        now=now,
    )


async def activate(conn: Conn, principal: Principal, name: str, now: datetime) -> None:
    """SETACTIVE: this filter alone enabled; "" disables every one."""
    if name == "":
        await filters.enable_only(conn, principal.address_id, None, now)
        return
    found = await existing(conn, principal, name)
    await filters.enable_only(conn, principal.address_id, found.filter.id, now)


async def delete(conn: Conn, principal: Principal, name: str) -> None:
    found = await existing(conn, principal, name)
    if found.active:
        raise ScriptError("ACTIVE", 'the active script cannot be deleted; SETACTIVE "" first')
    await filters.delete(conn, found.filter.id)


async def rename(conn: Conn, principal: Principal, old: str, new: str, now: datetime) -> None:
    found = await existing(conn, principal, old)
    check_name(new)
    if new != old and await find(conn, principal, new) is not None:
        raise ScriptError("ALREADYEXISTS", "a script of that name exists")
    await filters.update(conn, found.filter.id, {"name": new}, now)
