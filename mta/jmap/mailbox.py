"""Mailbox/get, /changes, /query, /queryChanges, /set (RFC 8621 2)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from common.db import Conn, execute, fetch_val
from mta.jmap import methods
from mta.jmap.registry import MethodCall, SetResponse, register, set_error
from mta.store import changes as change_log
from mta.store import emails, mailboxes
from mta.store.mailboxes import ensure_defaults

ROLES = ("inbox", "drafts", "sent", "trash", "junk", "archive")
PROPERTIES = (
    "id",
    "name",
    "parentId",
    "role",
    "sortOrder",
    "totalEmails",
    "unreadEmails",
    "totalThreads",
    "unreadThreads",
    "myRights",
    "isSubscribed",
)
RIGHTS = {
    "mayReadItems": True,
    "mayAddItems": True,
    "mayRemoveItems": True,
    "maySetSeen": True,
    "maySetKeywords": True,
    "mayCreateChild": True,
    "mayRename": True,
    "mayDelete": True,
    "maySubmit": True,
}
SETTABLE = {"name", "parentId", "role", "sortOrder", "isSubscribed"}
SERVER_SET = set(PROPERTIES) - SETTABLE


# Thread counts by (address, Mailbox state): counting a mailbox's rows of
# mta.mailbox_threads reads narrow rows (9 ms at 55,000 threads), and
# the Mailbox state moves with every change of membership or $seen, so a
# cached count is exact until the state moves.
THREAD_COUNTS: dict[tuple[str, str], dict[str, tuple[int, int]]] = {}
THREAD_COUNTS_MAX = 1000


async def _thread_counts(conn: Conn, address_id: str, state: str) -> dict[str, tuple[int, int]]:
    key = (address_id, state)
    found = THREAD_COUNTS.get(key)
    if found is not None:
        return found
    counts = await mailboxes.thread_counts(conn, address_id)
    if len(THREAD_COUNTS) >= THREAD_COUNTS_MAX:
        THREAD_COUNTS.clear()
    THREAD_COUNTS[key] = counts
    return counts


async def _rows(conn: Conn, address_id: str, *, threads: bool) -> list[dict[str, Any]]:
    # The state first: counts read after it are at least as new as it says.
    state = await methods.state(conn, address_id, "Mailbox") if threads else ""
    rows = [asdict(m) for m in await mailboxes.listing(conn, address_id)]
    counts = await _thread_counts(conn, address_id, state) if threads else {}
    for row in rows:
        row["total_threads"], row["unread_threads"] = counts.get(row["id"], (0, 0))
    return rows


def render(row: dict[str, Any], props: list[str]) -> dict[str, Any]:
    full = {
        "id": row["id"],
        "name": row["name"],
        "parentId": row["parent_id"],
        "role": row["role"],
        "sortOrder": row["sort_order"],
        "totalEmails": row["total_emails"],
        "unreadEmails": row["unread_emails"],
        "totalThreads": row["total_threads"],
        "unreadThreads": row["unread_threads"],
        "myRights": dict(RIGHTS),
        "isSubscribed": row["is_subscribed"],
    }
    return {p: full[p] for p in props}


async def mailbox_get(call: MethodCall) -> dict[str, Any]:
    account = call.account
    ids = methods.get_ids(call)
    props = methods.properties(call, PROPERTIES)
    threads = "totalThreads" in props or "unreadThreads" in props
    async with call.connection() as conn:
        await ensure_defaults(conn, account.address_id, call.now)
        state = await methods.state(conn, account.address_id, "Mailbox")
        rows = await _rows(conn, account.address_id, threads=threads)
    return {
        "accountId": account.id,
        "state": state,
        **methods.get_list(rows, ids, lambda row: render(row, props)),
    }


async def mailbox_changes(call: MethodCall) -> dict[str, Any]:
    out = await methods.changes(call, "Mailbox")
    # Counts move with every delivery; the log does not say which property changed.
    out["updatedProperties"] = None
    return out


# -- query ------------------------------------------------------------------------

FILTERS = {"parentId", "name", "role", "hasAnyRole", "isSubscribed"}
SORTS = {"sortOrder", "name"}


def _matches(call: MethodCall, row: dict[str, Any], condition: dict[str, Any]) -> bool:
    if "operator" in condition:
        op = condition["operator"]
        inner = condition.get("conditions")
        if (
            op not in ("AND", "OR", "NOT")
            or not isinstance(inner, list)
            or not all(isinstance(c, dict) for c in inner)
        ):
            call.fail("unsupportedFilter", "a FilterOperator needs AND/OR/NOT and conditions")
        results = [_matches(call, row, c) for c in inner]
        if op == "AND":
            return all(results)
        if op == "OR":
            return any(results)
        return not any(results)
    unknown = set(condition) - FILTERS
    if unknown:
        call.fail("unsupportedFilter", f"unknown filter {sorted(unknown)[0]}")
    for key, value in condition.items():
        if key == "parentId" and row["parent_id"] != value:
            return False
        if key == "name" and (
            not isinstance(value, str) or value.lower() not in row["name"].lower()
        ):
            return False
        if key == "role" and row["role"] != value:
            return False
        if key == "hasAnyRole" and (row["role"] is not None) != bool(value):
            return False
        if key == "isSubscribed" and row["is_subscribed"] != bool(value):
            return False
    return True


def _sort_key(call: MethodCall) -> Any:
    sort = call.arguments.get("sort") or []
    if not isinstance(sort, list):
        call.fail("invalidArguments", "sort must be an array")
    keys: list[tuple[str, bool]] = []
    for comparator in sort:
        if not isinstance(comparator, dict) or comparator.get("property") not in SORTS:
            call.fail("unsupportedSort", "sort by sortOrder or name")
        keys.append((comparator["property"], comparator.get("isAscending", True) is not False))
    return keys


def _ordered(rows: list[dict[str, Any]], keys: list[tuple[str, bool]]) -> list[dict[str, Any]]:
    out = sorted(rows, key=lambda r: r["id"])
    for prop, ascending in reversed(keys):
        if prop == "sortOrder":
            out.sort(key=lambda r: int(r["sort_order"]), reverse=not ascending)
        else:
            out.sort(key=lambda r: str(r["name"]).lower(), reverse=not ascending)
    return out


def _as_tree(rows: list[dict[str, Any]], all_ids: set[str]) -> list[dict[str, Any]]:
    """Parents before their children, siblings in the given order (sortAsTree)."""
    children: dict[str | None, list[dict[str, Any]]] = {}
    for row in rows:
        parent = row["parent_id"] if row["parent_id"] in all_ids else None
        children.setdefault(parent, []).append(row)
    out: list[dict[str, Any]] = []

    def walk(parent: str | None) -> None:
        for row in children.get(parent, []):
            out.append(row)
            walk(row["id"])

    walk(None)
    return out


async def _query_ids(call: MethodCall, conn: Conn) -> list[str]:
    account = call.account
    await ensure_defaults(conn, account.address_id, call.now)
    rows = await _rows(conn, account.address_id, threads=False)
    condition = call.arguments.get("filter")
    if condition is not None and not isinstance(condition, dict):
        call.fail("invalidArguments", "filter must be an object")
    keys = _sort_key(call)
    by_id = {r["id"]: r for r in rows}
    if call.arguments.get("filterAsTree") and condition:
        # A mailbox matches only if it and every ancestor match.
        def ok(row: dict[str, Any]) -> bool:
            while row is not None:
                if not _matches(call, row, condition):
                    return False
                row = by_id.get(row["parent_id"])  # type: ignore[assignment]
            return True

        matched = [r for r in rows if ok(r)]
    else:
        matched = [r for r in rows if not condition or _matches(call, r, condition)]
    ordered = _ordered(matched, keys)
    if call.arguments.get("sortAsTree"):
        ordered = _as_tree(ordered, {r["id"] for r in matched})
    return [r["id"] for r in ordered]


async def mailbox_query(call: MethodCall) -> dict[str, Any]:
    account = call.account
    async with call.connection() as conn:
        state = await methods.state(conn, account.address_id, "Mailbox")
        ids = await _query_ids(call, conn)
    return {
        "accountId": account.id,
        "queryState": state,
        "canCalculateChanges": True,
        **methods.window(call, ids),
    }


async def mailbox_query_changes(call: MethodCall) -> dict[str, Any]:
    account = call.account
    async with call.connection() as conn:
        changed = await methods.changed_since(call, conn, "Mailbox")
        state = await methods.state(conn, account.address_id, "Mailbox")
        ids = await _query_ids(call, conn)
    return methods.query_changes(
        call,
        old_state=call.arguments["sinceQueryState"],
        new_state=state,
        changed=changed,
        current_ids=ids,
    )


# -- set --------------------------------------------------------------------------


class Invalid(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("type"))
        self.error = error


def _invalid(*props: str, description: str | None = None) -> Invalid:
    return Invalid(set_error("invalidProperties", description, properties=list(props)))


async def _check_values(
    call: MethodCall, conn: Conn, values: dict[str, Any], mailbox_id: str | None
) -> dict[str, Any]:
    """Validated column values from a create object or an update patch."""
    account = call.account
    limits = call.limits
    out: dict[str, Any] = {}
    for key, value in values.items():
        if key in SERVER_SET and key != "id":
            # Clients may echo server-set values back unchanged; anything else is refused.
            raise _invalid(key, description=f"{key} is set by the server")
        if key == "id":
            if mailbox_id is None or value != mailbox_id:
                raise _invalid("id")
            continue
        if key not in SETTABLE:
            raise _invalid(key, description=f"unknown property {key}")
        if key == "name":
            if (
                not isinstance(value, str)
                or not value.strip()
                or len(value) > limits.max_size_mailbox_name
                or any(ord(c) < 32 or ord(c) == 127 for c in value)
            ):
                raise _invalid("name")
            out["name"] = value
        elif key == "parentId":
            if value is not None:
                if not isinstance(value, str):
                    raise _invalid("parentId")
                value = call.resolve_id(value) if value.startswith("#") else value
                if not await mailboxes.exists(conn, account.address_id, value):
                    raise _invalid("parentId", description="no such parent mailbox")
            out["parent_id"] = value
        elif key == "role":
            if value is not None and value not in ROLES:
                raise _invalid("role", description=f"role must be one of {', '.join(ROLES)}")
            out["role"] = value
        elif key == "sortOrder":
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**31:
                raise _invalid("sortOrder")
            out["sort_order"] = value
        elif key == "isSubscribed":
            if not isinstance(value, bool):
                raise _invalid("isSubscribed")
            out["is_subscribed"] = value
    return out


async def _check_place(
    call: MethodCall, conn: Conn, mailbox_id: str | None, name: str, parent_id: str | None
) -> None:
    """No sibling of the same name, no cycle, not deeper than maxMailboxDepth."""
    address_id = call.account.address_id
    clash = await mailboxes.sibling_named(conn, address_id, parent_id, name, mailbox_id)
    if clash is not None:
        # RFC 8620 5.3 alreadyExists, as the conformance suite's authors read RFC 8621 2.
        raise Invalid(
            set_error("alreadyExists", "a sibling mailbox has this name", existingId=clash)
        )
    depth = 1
    current = parent_id
    while current is not None:
        if current == mailbox_id:
            raise _invalid("parentId", description="a mailbox cannot be its own ancestor")
        depth += 1
        if depth > call.limits.max_mailbox_depth:
            raise _invalid("parentId", description="mailboxes nest too deep")
        current = await mailboxes.parent_of(conn, current)


async def _check_role(
    call: MethodCall, conn: Conn, role: str | None, mailbox_id: str | None
) -> None:
    if role is None:
        return
    taken = await mailboxes.with_role(conn, call.account.address_id, role)
    if taken is not None and taken != mailbox_id:
        raise _invalid("role", description=f"another mailbox has the role {role}")


async def _create(call: MethodCall, conn: Conn, values: dict[str, Any]) -> dict[str, Any]:
    cols = await _check_values(call, conn, values, None)
    if "name" not in cols:
        raise _invalid("name", description="name is required")
    await _check_place(call, conn, None, cols["name"], cols.get("parent_id"))
    await _check_role(call, conn, cols.get("role"), None)
    mailbox_id = await mailboxes.create(
        conn,
        call.account.address_id,
        parent_id=cols.get("parent_id"),
        name=cols["name"],
        role=cols.get("role"),
        sort_order=cols.get("sort_order", 0),
        is_subscribed=cols.get("is_subscribed", True),
        now=call.now,
    )
    created = {
        "id": mailbox_id,
        "totalEmails": 0,
        "unreadEmails": 0,
        "totalThreads": 0,
        "unreadThreads": 0,
        "myRights": dict(RIGHTS),
    }
    for key in ("sortOrder", "isSubscribed", "role", "parentId"):
        if key not in values:
            created[key] = {"sortOrder": 0, "isSubscribed": True, "role": None, "parentId": None}[
                key
            ]
    return created


async def _update(call: MethodCall, conn: Conn, mailbox_id: str, patch: dict[str, Any]) -> None:
    current = await mailboxes.lock(conn, call.account.address_id, mailbox_id)
    if current is None:
        raise Invalid(set_error("notFound"))
    cols = await _check_values(call, conn, patch, mailbox_id)
    if "name" in cols or "parent_id" in cols:
        await _check_place(
            call,
            conn,
            mailbox_id,
            cols.get("name", current.name),
            cols.get("parent_id", current.parent_id),
        )
    if "role" in cols:
        await _check_role(call, conn, cols["role"], mailbox_id)
    if not cols:
        return
    await mailboxes.update(conn, call.account.address_id, mailbox_id, cols, call.now)


async def _destroy(call: MethodCall, conn: Conn, mailbox_id: str, remove_emails: bool) -> None:
    address_id = call.account.address_id
    row = await mailboxes.lock_contents(conn, address_id, mailbox_id)
    if row is None:
        raise Invalid(set_error("notFound"))
    if row.has_child:
        raise Invalid(set_error("mailboxHasChild", "destroy the child mailboxes first"))
    if row.total_emails and not remove_emails:
        raise Invalid(set_error("mailboxHasEmail", "the mailbox is not empty"))
    if row.total_emails:
        # Emails only here are destroyed; those also elsewhere just leave this mailbox.
        members = await emails.members(conn, mailbox_id)
        only_here = [m.id for m in members if not m.elsewhere]
        moved = [m.id for m in members if m.elsewhere]
        await emails.destroy_emails(conn, address_id, only_here, call.now)
        await change_log.record(conn, address_id, "Email", moved, "updated", call.now)
    await mailboxes.destroy(conn, address_id, mailbox_id, call.now)


async def mailbox_set(call: MethodCall) -> dict[str, Any]:
    account = call.account
    create, update, destroy = methods.set_arguments(call)
    remove_emails = call.arguments.get("onDestroyRemoveEmails", False) is True
    out = SetResponse(account.id)
    async with call.transaction() as conn:
        # One writer per account at a time: the checks below read what they then change.
        await fetch_val(conn, "SELECT pg_advisory_xact_lock(hashtext(%s))", (f"jmap:{account.id}",))
        await ensure_defaults(conn, account.address_id, call.now)
        out.old_state = await methods.check_if_in_state(call, conn, "Mailbox")
        # Parents are created before children that reference them ("#k1").
        pending = dict(create)
        while pending:
            progressed = False
            for creation_id, values in list(pending.items()):
                parent = values.get("parentId")
                if isinstance(parent, str) and parent.startswith("#") and parent[1:] in pending:
                    continue
                del pending[creation_id]
                progressed = True
                try:
                    async with _savepoint(conn):
                        out.created[creation_id] = await _create(call, conn, values)
                    call.created(creation_id, out.created[creation_id]["id"])
                except Invalid as exc:
                    out.not_created[creation_id] = exc.error
                except Exception:  # a MethodError from resolve_id
                    raise
            if not progressed:
                for creation_id in pending:
                    out.not_created[creation_id] = _invalid("parentId").error
                break
        for mailbox_id, patch in update.items():
            mailbox_id = call.resolve_id(mailbox_id)
            try:
                async with _savepoint(conn):
                    await _update(call, conn, mailbox_id, patch)
                out.updated[mailbox_id] = None
            except Invalid as exc:
                out.not_updated[mailbox_id] = exc.error
        # Children first, so destroying a parent and its child in one call works.
        order = await mailboxes.depth_order(conn, [call.resolve_id(i) for i in destroy])
        for mailbox_id in order:
            try:
                async with _savepoint(conn):
                    await _destroy(call, conn, mailbox_id, remove_emails)
                out.destroyed.append(mailbox_id)
            except Invalid as exc:
                out.not_destroyed[mailbox_id] = exc.error
        out.new_state = await methods.state(conn, account.address_id, "Mailbox")
    return out.arguments()


class _savepoint:
    """A SAVEPOINT around one object's change: a refused object leaves the others standing."""

    counter = 0

    def __init__(self, conn: Conn) -> None:
        self.conn = conn
        _savepoint.counter += 1
        self.name = f"jmap_{_savepoint.counter}"

    async def __aenter__(self) -> None:
        await execute(self.conn, f"SAVEPOINT {self.name}")

    async def __aexit__(self, kind: Any, exc: Any, tb: Any) -> None:
        if kind is None:
            await execute(self.conn, f"RELEASE SAVEPOINT {self.name}")
        else:
            await execute(self.conn, f"ROLLBACK TO SAVEPOINT {self.name}")


register("Mailbox/get", mailbox_get)
register("Mailbox/changes", mailbox_changes)
register("Mailbox/query", mailbox_query)
register("Mailbox/queryChanges", mailbox_query_changes)
register("Mailbox/set", mailbox_set)
