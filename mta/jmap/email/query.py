"""Email/query and Email/queryChanges (RFC 8621 4.4, 4.5; RFC 8620 5.5, 5.6).

The filter and sort compile to SQL in the store (mta/store/email_query.py,
which says how each is served); here are the method arguments, paging,
anchors, the totals remembered per Email state, and the responses.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from common.db import Conn
from mta.jmap.email.context import EmailContext, is_id
from mta.jmap.email.errors import MethodError
from mta.store import changes
from mta.store import email_query as compiled
from mta.store.email_query import Plan, Sql, count_statement, like, prefix_query, search_words

__all__ = [
    "Plan",
    "Sql",
    "compile_query",
    "condition",
    "count_statement",
    "keyword",
    "like",
    "prefix_query",
    "query",
    "query_changes",
    "search_words",
]


@contextmanager
def _as_method_error() -> Iterator[None]:
    """A filter or sort the store refuses, answered as the method error it names."""
    try:
        yield
    except compiled.QueryError as exc:
        raise MethodError(exc.type, exc.description) from exc


def keyword(value: object) -> str:
    with _as_method_error():
        return compiled.keyword(value)


def condition(sql: Sql, filt: object, a: str = "e") -> str:
    """One FilterOperator or FilterCondition as SQL over the emails row ``a``."""
    with _as_method_error():
        return compiled.condition(sql, filt, a)


def compile_query(account_id: str, args: Mapping[str, Any]) -> Plan:
    with _as_method_error():
        return compiled.compile_query(account_id, args)


def _uint(value: object, name: str) -> int:
    with _as_method_error():
        return compiled._uint(value, name)


# Totals by (account, Email state, statement): a total changes only with the
# account's Email state (every create, update and destroy of an email moves
# it), and clients ask the same total again for every page and every poll.
_TOTALS: OrderedDict[tuple[str, str, str], int] = OrderedDict()
TOTALS_CACHED = 2048


def _total_key(plan: Plan, state: str) -> tuple[str, str, str]:
    return (plan.account_id, state, plan.fingerprint)


def _remember(key: tuple[str, str, str], total: int) -> None:
    _TOTALS[key] = total
    if len(_TOTALS) > TOTALS_CACHED:
        _TOTALS.popitem(last=False)


async def _total(conn: Conn, plan: Plan, state: str) -> int:
    key = _total_key(plan, state)
    found = _TOTALS.get(key)
    if found is not None:
        _TOTALS.move_to_end(key)
        return found
    total = await compiled.count(conn, plan)
    _remember(key, total)
    return total


async def query(
    ctx: EmailContext, conn: Conn, account_id: str, args: Mapping[str, Any]
) -> dict[str, Any]:
    plan = compile_query(account_id, args)
    position = args.get("position", 0)
    if not isinstance(position, int) or isinstance(position, bool):
        raise MethodError("invalidArguments", "position is an Int")
    limit = args.get("limit")
    capped = False
    if limit is None or limit > ctx.max_query_limit:
        capped = limit is not None
        limit = ctx.max_query_limit
    limit = _uint(limit, "limit")
    calculate_total = bool(args.get("calculateTotal", False))
    state = await changes.state(conn, account_id, "Email")
    total: int | None = None
    anchor = args.get("anchor")
    if anchor is not None:
        offset = args.get("anchorOffset", 0)
        if not isinstance(offset, int) or isinstance(offset, bool):
            raise MethodError("invalidArguments", "anchorOffset is an Int")
        found = (
            (await compiled.positions(conn, plan, [anchor])).get(anchor) if is_id(anchor) else None
        )
        if found is None:
            raise MethodError("anchorNotFound")
        position = max(0, found + offset)
    elif position < 0:
        total = await _total(conn, plan, state)
        position = max(0, total + position)
    together = calculate_total and total is None and plan.words_first and not plan.collapse
    if together:
        total = _TOTALS.get(_total_key(plan, state))
        together = total is None
    ids, counted = await compiled.page(conn, plan, position, limit, with_total=together)
    if together and counted is not None:
        total = counted
        _remember(_total_key(plan, state), total)
    out: dict[str, Any] = {
        "accountId": account_id,
        "queryState": state,
        "canCalculateChanges": True,
        "position": position,
        "ids": ids,
    }
    if calculate_total:
        out["total"] = total if total is not None else await _total(conn, plan, state)
    if capped:
        out["limit"] = limit
    return out


async def query_changes(
    ctx: EmailContext, conn: Conn, account_id: str, args: Mapping[str, Any]
) -> dict[str, Any]:
    """Every email changed since the state (and its thread-mates, whose collapse or
    thread keyword filters may have moved) is reported removed, and added back at
    its index if it is in the results now (RFC 8620 5.6 allows removed ids that were
    never in the old results: a client removes, then inserts)."""
    plan = compile_query(account_id, args)
    since = args.get("sinceQueryState")
    if not isinstance(since, str):
        raise MethodError("invalidArguments", "sinceQueryState is a string")
    state = await changes.state(conn, account_id, "Email")
    if not since.isdigit() or len(since) > 19 or int(since) > int(state):
        raise MethodError("cannotCalculateChanges")
    pruned = await changes.pruned_upto(conn, account_id)
    if since != state and pruned is not None and int(since) < pruned:
        raise MethodError("cannotCalculateChanges", "that state is older than the history kept")
    max_changes = args.get("maxChanges")
    if max_changes is not None:
        max_changes = _uint(max_changes, "maxChanges")
    changed = await changes.emails_changed_since(conn, account_id, int(since))
    positions = await compiled.positions(conn, plan, changed) if changed else {}
    added: list[dict[str, Any]] = [
        {"id": i, "index": n} for i, n in sorted(positions.items(), key=lambda x: x[1])
    ]
    if max_changes is not None and max_changes and len(changed) + len(added) > max_changes:
        raise MethodError("tooManyChanges")
    out: dict[str, Any] = {
        "accountId": account_id,
        "oldQueryState": since,
        "newQueryState": state,
        "removed": changed,
        "added": added,
    }
    if args.get("calculateTotal"):
        out["total"] = await _total(conn, plan, state)
    return out
