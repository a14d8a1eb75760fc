"""VacationResponse/get and /set (RFC 8621 8); the replies themselves: mta/vacation.py."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Any

from common.db import Conn
from mta.jmap import methods
from mta.jmap.registry import VACATION, MethodCall, SetResponse, register, set_error
from mta.store import vacation

SINGLETON = "singleton"
PROPERTIES = ("id", "isEnabled", "fromDate", "toDate", "subject", "textBody", "htmlBody")


def _utc(value: datetime | None) -> str | None:
    return None if value is None else value.strftime("%Y-%m-%dT%H:%M:%SZ")


async def _row(conn: Conn, address_id: str) -> dict[str, Any]:
    return asdict(await vacation.get(conn, address_id))


def render(row: dict[str, Any], props: list[str]) -> dict[str, Any]:
    full = {
        "id": SINGLETON,
        "isEnabled": row["is_enabled"],
        "fromDate": _utc(row["from_date"]),
        "toDate": _utc(row["to_date"]),
        "subject": row["subject"],
        "textBody": row["text_body"],
        "htmlBody": row["html_body"],
    }
    return {p: full[p] for p in props}


async def vacation_get(call: MethodCall) -> dict[str, Any]:
    account = call.account
    ids = methods.get_ids(call)
    props = methods.properties(call, PROPERTIES)
    async with call.connection() as conn:
        state = await methods.state(conn, account.address_id, "VacationResponse")
        row = await _row(conn, account.address_id)
    wanted = [SINGLETON] if ids is None else ids
    return {
        "accountId": account.id,
        "state": state,
        "list": [render(row, props) for i in wanted if i == SINGLETON],
        "notFound": [i for i in wanted if i != SINGLETON],
    }


def _date(value: Any) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.endswith("Z"):
        raise ValueError
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _columns(patch: dict[str, Any]) -> dict[str, Any] | dict[str, list[str]]:
    cols: dict[str, Any] = {}
    bad: list[str] = []
    for key, value in patch.items():
        try:
            if key == "id":
                if value != SINGLETON:
                    bad.append(key)
            elif key == "isEnabled":
                if not isinstance(value, bool):
                    raise ValueError
                cols["is_enabled"] = value
            elif key in ("fromDate", "toDate"):
                cols["from_date" if key == "fromDate" else "to_date"] = _date(value)
            elif key in ("subject", "textBody", "htmlBody"):
                limit = 998 if key == "subject" else 65536
                if value is not None and (not isinstance(value, str) or len(value) > limit):
                    raise ValueError
                cols[
                    {"subject": "subject", "textBody": "text_body", "htmlBody": "html_body"}[key]
                ] = value
            else:
                bad.append(key)
        except ValueError:
            bad.append(key)
    return {"__bad__": bad} if bad else cols


async def vacation_set(call: MethodCall) -> dict[str, Any]:
    account = call.account
    create, update, destroy = methods.set_arguments(call)
    out = SetResponse(account.id)
    out.not_created = {cid: set_error("singleton") for cid in create}
    out.not_destroyed = {i: set_error("singleton") for i in destroy}
    async with call.transaction() as conn:
        out.old_state = await methods.check_if_in_state(call, conn, "VacationResponse")
        for object_id, patch in update.items():
            if object_id != SINGLETON:
                out.not_updated[object_id] = set_error("notFound")
                continue
            cols = _columns(patch)
            if "__bad__" in cols:
                out.not_updated[object_id] = set_error(
                    "invalidProperties", properties=cols["__bad__"]
                )
                continue
            await vacation.update(conn, account.address_id, cols, call.now)
            out.updated[object_id] = None
        out.new_state = await methods.state(conn, account.address_id, "VacationResponse")
    return out.arguments()


register("VacationResponse/get", vacation_get, capability=VACATION)
register("VacationResponse/set", vacation_set, capability=VACATION)
