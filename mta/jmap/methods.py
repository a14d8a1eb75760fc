"""Generic parts of the standard methods (RFC 8620 5): /get ids, /set sizes, /changes, /queryChanges.

State strings come from the change log (``mta.changes``): a type's state is
the id of the account's latest change of that type, so it moves exactly when
an object of the type is created, updated or destroyed. /changes reads the
rows after the client's state; when that state is older than what the log
still holds (``mta.changes_pruned``) or is not one of ours, the answer is
``cannotCalculateChanges`` and the client resynchronises.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

from common.db import Conn
from mta.jmap.registry import MethodCall
from mta.store import changes as change_log


def is_uuid(value: str) -> bool:
    """Whether an id can name a row (ours are uuids): others are simply not found."""
    try:
        uuid.UUID(value)
    except (ValueError, TypeError, AttributeError):
        return False
    return len(value) == 36


async def state(conn: Conn, address_id: str, type_name: str) -> str:
    return await change_log.state(conn, address_id, type_name)


def get_ids(call: MethodCall) -> list[str] | None:
    """The ``ids`` argument of a /get (None: all), checked against maxObjectsInGet."""
    ids = call.arguments.get("ids")
    if ids is None:
        return None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        call.fail("invalidArguments", "ids must be an array of ids or null")
    if len(ids) > call.limits.max_objects_in_get:
        call.fail("requestTooLarge", f"at most {call.limits.max_objects_in_get} ids per /get")
    # "#k1" creation references name objects made earlier in this request.
    return list(dict.fromkeys(call.resolve_id(i) for i in ids))


def get_list(
    rows: Sequence[dict[str, Any]],
    ids: list[str] | None,
    render: Callable[[dict[str, Any]], dict[str, Any]],
) -> dict[str, Any]:
    """A /get's ``list`` and ``notFound``: ``ids`` in their order (None: every row)."""
    by_id = {r["id"]: r for r in rows}
    wanted = list(by_id) if ids is None else ids
    return {
        "list": [render(by_id[i]) for i in wanted if i in by_id],
        "notFound": [i for i in wanted if i not in by_id],
    }


def properties(
    call: MethodCall, known: Sequence[str], always: Sequence[str] = ("id",)
) -> list[str]:
    """The ``properties`` argument (None: all known), invalidArguments for unknown names."""
    asked = call.arguments.get("properties")
    if asked is None:
        return list(known)
    if not isinstance(asked, list) or not all(isinstance(p, str) for p in asked):
        call.fail("invalidArguments", "properties must be an array of names or null")
    unknown = [p for p in asked if p not in known]
    if unknown:
        call.fail("invalidArguments", f"unknown property {unknown[0]}")
    return list(dict.fromkeys([*always, *asked]))


def set_arguments(
    call: MethodCall,
) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """(create, update, destroy) of a /set, checked against maxObjectsInSet."""
    create = call.arguments.get("create") or {}
    update = call.arguments.get("update") or {}
    destroy = call.arguments.get("destroy") or []
    if not isinstance(create, dict) or not all(isinstance(v, dict) for v in create.values()):
        call.fail("invalidArguments", "create must map creation ids to objects")
    if not isinstance(update, dict) or not all(isinstance(v, dict) for v in update.values()):
        call.fail("invalidArguments", "update must map ids to patch objects")
    if not isinstance(destroy, list) or not all(isinstance(v, str) for v in destroy):
        call.fail("invalidArguments", "destroy must be an array of ids")
    if len(create) + len(update) + len(destroy) > call.limits.max_objects_in_set:
        call.fail("requestTooLarge", f"at most {call.limits.max_objects_in_set} objects per /set")
    return create, update, destroy


async def check_if_in_state(call: MethodCall, conn: Conn, type_name: str) -> str:
    """The current state; ``stateMismatch`` when ``ifInState`` names another."""
    current = await state(conn, call.account.address_id, type_name)
    wanted = call.arguments.get("ifInState")
    if wanted is not None and wanted != current:
        call.fail("stateMismatch", f"the state is {current}, not {wanted}")
    return current


def _max_changes(call: MethodCall) -> int | None:
    value = call.arguments.get("maxChanges")
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        call.fail("invalidArguments", "maxChanges must be a positive integer")
    return value


async def _since(call: MethodCall, conn: Conn, argument: str, type_name: str) -> tuple[int, int]:
    """(since, current) change ids; cannotCalculateChanges when since is unknown or pruned."""
    since_state = call.arguments.get(argument)
    if not isinstance(since_state, str):
        call.fail("invalidArguments", f"{argument} is required")
    address_id = call.account.address_id
    current = int(await state(conn, address_id, type_name))
    if not since_state.isdigit() or len(since_state) > 19:
        call.fail("cannotCalculateChanges", "unknown state")
    since = int(since_state)
    if since == current:
        return since, current  # up to date, however old the last change is
    pruned = await change_log.pruned_upto(conn, address_id)
    if since > current or (pruned is not None and since < pruned):
        call.fail("cannotCalculateChanges", "that state is older than the history kept")
    return since, current


CHANGE_BATCH = 4


async def changes(call: MethodCall, type_name: str) -> dict[str, Any]:
    """A /changes response for ``type_name`` from the change log (RFC 8620 5.2)."""
    max_changes = _max_changes(call)
    account = call.account
    async with call.connection() as conn:
        since, current = await _since(call, conn, "sinceState", type_name)
        limit = (max_changes or 100_000) * CHANGE_BATCH + 1
        rows = await change_log.between(conn, account.address_id, type_name, since, current, limit)
    first: dict[str, str] = {}  # object -> its first change in the window
    last: dict[str, str] = {}
    new_state = since
    has_more = len(rows) == limit
    for row in rows:
        oid = row.object_id
        if oid not in first and max_changes is not None and len(first) >= max_changes:
            has_more = True
            break
        first.setdefault(oid, row.change)
        last[oid] = row.change
        new_state = row.id
    if not has_more:
        new_state = current
    created, updated, destroyed = [], [], []
    for oid, begin in first.items():
        end = last[oid]
        if begin == "created":
            if end != "destroyed":
                created.append(oid)
            # created and destroyed within the window: the client never saw it
        elif end == "destroyed":
            destroyed.append(oid)
        else:
            updated.append(oid)
    return {
        "accountId": account.id,
        "oldState": str(since),
        "newState": str(new_state),
        "hasMoreChanges": has_more,
        "created": created,
        "updated": updated,
        "destroyed": destroyed,
    }


async def changed_since(
    call: MethodCall, conn: Conn, type_name: str, argument: str = "sinceQueryState"
) -> set[str]:
    """Ids of ``type_name`` objects changed after the client's query state (for /queryChanges)."""
    since, current = await _since(call, conn, argument, type_name)
    return await change_log.changed_ids(conn, call.account.address_id, type_name, since, current)


def query_changes(
    call: MethodCall,
    *,
    old_state: str,
    new_state: str,
    changed: set[str],
    current_ids: Sequence[str],
    total: int | None = None,
) -> dict[str, Any]:
    """A /queryChanges response (RFC 8620 5.6) from the ids changed since the old state.

    No past result lists are kept, so every changed id is "removed" and those
    still in the results are "added" back at their index: exactly what a
    client needs to patch its list (the RFC allows reporting more than moved).
    ``upToId`` stops the additions after that id.
    """
    max_changes = _max_changes(call)
    up_to = call.arguments.get("upToId")
    removed = sorted(changed)
    added: list[dict[str, Any]] = []
    for index, object_id in enumerate(current_ids):
        if object_id in changed:
            added.append({"id": object_id, "index": index})
        if up_to is not None and object_id == up_to:
            break
    if max_changes is not None and len(removed) + len(added) > max_changes:
        call.fail("tooManyChanges", "more changes than maxChanges")
    out: dict[str, Any] = {
        "accountId": call.account.id,
        "oldQueryState": old_state,
        "newQueryState": new_state,
        "removed": removed,
        "added": added,
    }
    if call.arguments.get("calculateTotal"):
        out["total"] = len(current_ids) if total is None else total
    return out


def window(call: MethodCall, ids: Sequence[str]) -> dict[str, Any]:
    """position / anchor / anchorOffset / limit over a full result list (RFC 8620 5.5)."""
    args = call.arguments
    position = args.get("position", 0)
    limit = args.get("limit")
    anchor = args.get("anchor")
    offset = args.get("anchorOffset", 0)
    for name, value in (("position", position), ("anchorOffset", offset)):
        if not isinstance(value, int) or isinstance(value, bool):
            call.fail("invalidArguments", f"{name} must be an integer")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        call.fail("invalidArguments", "limit must be a non-negative integer")
    total = len(ids)
    if anchor is not None:
        try:
            start = ids.index(anchor) + offset
        except ValueError:
            call.fail("anchorNotFound")
        start = max(0, start)
    else:
        start = position if position >= 0 else max(0, total + position)
    start = min(start, total)
    end = total if limit is None else min(total, start + limit)
    out: dict[str, Any] = {"position": start, "ids": list(ids[start:end])}
    if args.get("calculateTotal"):
        out["total"] = total
    if limit is not None:
        out["limit"] = limit
    return out


async def prune_changes(conn: Conn, keep: timedelta, now: Any) -> int:
    """Drop change rows older than ``keep``, remembering per account where history starts."""
    return await change_log.prune(conn, now - keep)
