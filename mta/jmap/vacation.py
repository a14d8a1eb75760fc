"""VacationResponse/get and /set (RFC 8621 8); the replies themselves: mta/vacation.py."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from common.db import Conn, execute, fetch_one
from mta.jmap import methods
from mta.jmap.registry import VACATION, MethodCall, register, set_error
from mta.store import changes as change_log

SINGLETON = "singleton"
PROPERTIES = ("id", "isEnabled", "fromDate", "toDate", "subject", "textBody", "htmlBody")


def _utc(value: datetime | None) -> str | None:
    return None if value is None else value.strftime("%Y-%m-%dT%H:%M:%SZ")


async def _row(conn: Conn, address_id: str) -> dict[str, Any]:
    row = await fetch_one(
        conn,
        """
        SELECT is_enabled, from_date, to_date, subject, text_body, html_body
          FROM mta.vacation_responses WHERE address_id = %s
        """,
        (address_id,),
    )
    return row or {
        "is_enabled": False,
        "from_date": None,
        "to_date": None,
        "subject": None,
        "text_body": None,
        "html_body": None,
    }


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
    not_created = {cid: set_error("singleton") for cid in create}
    not_destroyed = {i: set_error("singleton") for i in destroy}
    updated: dict[str, Any] = {}
    not_updated: dict[str, Any] = {}
    async with call.transaction() as conn:
        old_state = await methods.check_if_in_state(call, conn, "VacationResponse")
        for object_id, patch in update.items():
            if object_id != SINGLETON:
                not_updated[object_id] = set_error("notFound")
                continue
            cols = _columns(patch)
            if "__bad__" in cols:
                not_updated[object_id] = set_error("invalidProperties", properties=cols["__bad__"])
                continue
            current = await _row(conn, account.address_id)
            merged = {**current, **cols}
            await execute(
                conn,
                """
                INSERT INTO mta.vacation_responses
                    (address_id, is_enabled, from_date, to_date, subject, text_body, html_body,
                     updated_at)
                VALUES (%(a)s, %(is_enabled)s, %(from_date)s, %(to_date)s, %(subject)s,
                        %(text_body)s, %(html_body)s, %(now)s)
                ON CONFLICT (address_id) DO UPDATE SET
                    is_enabled = EXCLUDED.is_enabled, from_date = EXCLUDED.from_date,
                    to_date = EXCLUDED.to_date, subject = EXCLUDED.subject,
                    text_body = EXCLUDED.text_body, html_body = EXCLUDED.html_body,
                    updated_at = EXCLUDED.updated_at
                """,
                {**merged, "a": account.address_id, "now": call.now},
            )
            # A new or changed response answers everyone once again (RFC 5230 4.2).
            await execute(
                conn,
                "DELETE FROM mta.vacation_replies WHERE address_id = %s",
                (account.address_id,),
            )
            await change_log.record(
                conn,
                account.address_id,
                "VacationResponse",
                [account.address_id],
                "updated",
                call.now,
            )
            updated[object_id] = None
        new_state = await methods.state(conn, account.address_id, "VacationResponse")
    return {
        "accountId": account.id,
        "oldState": old_state,
        "newState": new_state,
        "created": None,
        "updated": updated or None,
        "destroyed": None,
        "notCreated": not_created or None,
        "notUpdated": not_updated or None,
        "notDestroyed": not_destroyed or None,
    }


register("VacationResponse/get", vacation_get, capability=VACATION)
register("VacationResponse/set", vacation_set, capability=VACATION)
