"""Filter rules the routes share: compiling, field checks, address ownership."""

from __future__ import annotations

from typing import Any

from common.db import Conn
from mail.addresses import store as addresses_store
from mail.errors import not_found, validation_error
from mail.web.body import optional_str, required_str
from mail.web.ownership import parse_uuid
from mta.sieve.compiler import MAX_SCRIPT_BYTES, Script, SieveError, compile_script

MAX_NAME = 200
MAX_POSITION = 1_000_000


def compile_or_400(text: str) -> Script:
    """The compiled script, or 400 validation_error naming the line (``line 3: ...``)."""
    try:
        return compile_script(text)
    except SieveError as exc:
        raise validation_error(f"script does not compile: {exc}") from None


def script_field(body: dict[str, Any], *, required: bool) -> str | None:
    getter = required_str if required else optional_str
    return getter(body, "script", max_length=MAX_SCRIPT_BYTES)


def name_field(body: dict[str, Any], *, required: bool) -> str | None:
    value = (required_str if required else optional_str)(body, "name", max_length=MAX_NAME)
    if value is not None and not value.strip():
        raise validation_error("name must not be blank")
    return value.strip() if value is not None else None


def position_field(body: dict[str, Any]) -> int | None:
    value = body.get("position")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_POSITION:
        raise validation_error(f"position must be an integer from 0 to {MAX_POSITION}")
    return value


async def owned_address(conn: Conn, account: Any, raw_id: object) -> dict[str, Any]:
    """The address ``raw_id`` if this account owns it; 404 otherwise (also for a foreign one)."""
    if not isinstance(raw_id, str):
        raise validation_error("address_id must be a string")
    row = await addresses_store.get_owned(conn, account.id, parse_uuid(raw_id, "address"))
    if row is None:
        raise not_found("address")
    return row
