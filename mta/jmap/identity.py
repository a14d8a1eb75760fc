"""Identity/get, /changes, /set (RFC 8621 6): who an address sends as.

Every address has one identity from the start (its address and display
name, made on first read); more may be added for the same address (another
name, signature or Reply-To). An identity's ``email`` must be the account's
own address (``forbiddenFrom`` otherwise): this server lets an address send
only as itself, like Fastmail without a verified alias.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from common.db import Conn, Json
from mta.jmap import methods
from mta.jmap.mailbox import Invalid, _savepoint
from mta.jmap.registry import (
    MAIL,
    SUBMISSION,
    Account,
    MethodCall,
    SetResponse,
    register,
    set_error,
)
from mta.store import identities

PROPERTIES = (
    "id",
    "name",
    "email",
    "replyTo",
    "bcc",
    "textSignature",
    "htmlSignature",
    "mayDelete",
)


async def ensure_identity(conn: Conn, account: Account, call: MethodCall) -> None:
    await identities.ensure(conn, account.address_id, account.display_name, account.email, call.now)


def render(row: dict[str, Any], props: list[str]) -> dict[str, Any]:
    full = {
        "id": row["id"],
        "name": row["name"],
        "email": row["email"],
        "replyTo": row["reply_to"],
        "bcc": row["bcc"],
        "textSignature": row["text_signature"],
        "htmlSignature": row["html_signature"],
        "mayDelete": True,
    }
    return {p: full[p] for p in props}


async def identity_get(call: MethodCall) -> dict[str, Any]:
    account = call.account
    ids = methods.get_ids(call)
    props = methods.properties(call, PROPERTIES)
    async with call.connection() as conn:
        await ensure_identity(conn, account, call)
        state = await methods.state(conn, account.address_id, "Identity")
        rows = [asdict(i) for i in await identities.list_for(conn, account.address_id)]
    return {
        "accountId": account.id,
        "state": state,
        **methods.get_list(rows, ids, lambda row: render(row, props)),
    }


async def identity_changes(call: MethodCall) -> dict[str, Any]:
    return await methods.changes(call, "Identity")


def _addresses(value: Any, prop: str) -> Any:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) > 20:
        raise Invalid(set_error("invalidProperties", properties=[prop]))
    out = []
    for item in value:
        if (
            not isinstance(item, dict)
            or set(item) - {"name", "email"}
            or not isinstance(item.get("email"), str)
            or "@" not in item["email"]
            or len(item["email"]) > 320
            or not isinstance(item.get("name", ""), (str, type(None)))
        ):
            raise Invalid(set_error("invalidProperties", properties=[prop]))
        out.append({"name": item.get("name"), "email": item["email"]})
    return out


def _columns(values: dict[str, Any], *, creating: bool, account: Account) -> dict[str, Any]:
    cols: dict[str, Any] = {}
    for key, value in values.items():
        if key == "email":
            if not creating:
                raise Invalid(
                    set_error("invalidProperties", "email cannot change", properties=["email"])
                )
            if not isinstance(value, str) or value.lower() != account.email.lower():
                raise Invalid(set_error("forbiddenFrom", "this account may only send as itself"))
            cols["email"] = account.email
        elif key == "name":
            if not isinstance(value, str) or len(value) > 255:
                raise Invalid(set_error("invalidProperties", properties=["name"]))
            cols["name"] = value
        elif key in ("replyTo", "bcc"):
            parsed = _addresses(value, key)
            cols["reply_to" if key == "replyTo" else "bcc"] = (
                None if parsed is None else Json(parsed)
            )
        elif key in ("textSignature", "htmlSignature"):
            if not isinstance(value, str) or len(value) > 65536:
                raise Invalid(set_error("invalidProperties", properties=[key]))
            cols["text_signature" if key == "textSignature" else "html_signature"] = value
        elif key in ("id", "mayDelete"):
            raise Invalid(
                set_error("invalidProperties", f"{key} is set by the server", properties=[key])
            )
        else:
            raise Invalid(
                set_error("invalidProperties", f"unknown property {key}", properties=[key])
            )
    return cols


async def identity_set(call: MethodCall) -> dict[str, Any]:
    account = call.account
    create, update, destroy = methods.set_arguments(call)
    out = SetResponse(account.id)
    async with call.transaction() as conn:
        await ensure_identity(conn, account, call)
        out.old_state = await methods.check_if_in_state(call, conn, "Identity")
        for creation_id, values in create.items():
            try:
                cols = _columns(values, creating=True, account=account)
                if "email" not in cols:
                    raise Invalid(set_error("invalidProperties", properties=["email"]))
                async with _savepoint(conn):
                    identity_id = await identities.create(conn, account.address_id, cols, call.now)
                out.created[creation_id] = {"id": identity_id, "mayDelete": True}
                call.created(creation_id, identity_id)
            except Invalid as exc:
                out.not_created[creation_id] = exc.error
        for identity_id, patch in update.items():
            identity_id = call.resolve_id(identity_id)
            try:
                cols = _columns(patch, creating=False, account=account)
                async with _savepoint(conn):
                    if not await identities.update(
                        conn, account.address_id, identity_id, cols, call.now
                    ):
                        raise Invalid(set_error("notFound"))
                out.updated[identity_id] = None
            except Invalid as exc:
                out.not_updated[identity_id] = exc.error
        for identity_id in destroy:
            identity_id = call.resolve_id(identity_id)
            if await identities.destroy(conn, account.address_id, identity_id, call.now):
                out.destroyed.append(identity_id)
            else:
                out.not_destroyed[identity_id] = set_error("notFound")
        out.new_state = await methods.state(conn, account.address_id, "Identity")
    return out.arguments()


# Identity belongs to the submission capability (RFC 8621 6); mail-only
# clients (which do not name submission) may read and edit identities too.
register("Identity/get", identity_get, capability=(SUBMISSION, MAIL))
register("Identity/changes", identity_changes, capability=(SUBMISSION, MAIL))
register("Identity/set", identity_set, capability=(SUBMISSION, MAIL))
