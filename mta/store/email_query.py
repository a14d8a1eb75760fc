"""An Email query (RFC 8621 4.4) compiled to SQL over the ``mta.emails`` row ``e``.

A filter compiles to one SQL condition (columns only: no MIME is read). A
query whose filter pins one mailbox (``inMailbox`` at the top or inside a
top-level AND) is driven from ``email_mailboxes``, so the default sort
(receivedAt, newest first) reads the ``email_mailboxes_listing`` index in
order and stops at the page. collapseThreads keeps an email when no other
matching email of its thread comes before it in the sort: a NOT EXISTS probe
per row through the thread index, so a first page still stops early.

Text search is PostgreSQL full text ('simple' configuration: whole words,
no stemming) over the subject, the addresses, Bcc and the text body parts;
``from`` matches words or word prefixes of the From names and addresses
("ali", "example.com"); ``to``, ``cc``, ``bcc`` and ``subject`` are
case-insensitive substrings; ``header`` reads the header block of the raw
message where it is kept inline (mta/store/raw.py).

A filter or sort the compiler cannot take raises :class:`QueryError` with
the JMAP method error type it is (the JMAP layer, mta/jmap/email/query.py,
answers it as that error). The JMAP methods (and IMAP SEARCH next) run the
plan with :func:`page`, :func:`count` and :func:`positions`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from common.db import Conn, fetch_all, fetch_val
from mta.store.emails import is_id


class QueryError(Exception):
    """A query the compiler refuses: ``type`` is the JMAP method error it is."""

    def __init__(self, type_: str, description: str | None = None) -> None:
        super().__init__(description or type_)
        self.type = type_
        self.description = description


CONDITIONS = {
    "inMailbox", "inMailboxOtherThan", "before", "after", "minSize", "maxSize",
    "allInThreadHaveKeyword", "someInThreadHaveKeyword", "noneInThreadHaveKeyword",
    "hasKeyword", "notKeyword", "hasAttachment", "text", "from", "to", "cc", "bcc", "subject",
    "body", "header",
}  # fmt: skip
COLLATIONS = {"i;ascii-casemap", "i;unicode-casemap", "i;ascii-numeric", "i;octet"}
_KEYWORD = re.compile(r"^[\x21-\x7e]{1,255}$")
_KEYWORD_FORBIDDEN = set('()]{%*"\\')
_WORD = re.compile(r"\w+", re.UNICODE)
# A whole address: matched exactly (case-insensitively) from its own index.
_ADDRESS = re.compile(r"^\s*[^@\s<>\"]+@[^@\s<>\".]+(\.[^@\s<>\".]+)+\s*$")
DEFAULT_SORT = [{"property": "receivedAt", "isAscending": False}]


def keyword(value: object) -> str:
    if (
        not isinstance(value, str)
        or not _KEYWORD.match(value)
        or any(c in _KEYWORD_FORBIDDEN for c in value)
    ):
        raise QueryError("invalidArguments", f"bad keyword {value!r}")
    return value.lower()


def _date(value: object) -> datetime:
    if not isinstance(value, str):
        raise QueryError("invalidArguments", "dates are UTCDate strings")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise QueryError("invalidArguments", f"bad date {value!r}") from exc
    if parsed.tzinfo is None:
        raise QueryError("invalidArguments", f"{value!r} has no time zone")
    return parsed


def _uint(value: object, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise QueryError("invalidArguments", f"{name} must be an UnsignedInt")
    return value


def _text(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise QueryError("invalidArguments", f"{name} must be a string")
    return value


def like(value: str) -> str:
    """A substring pattern for ILIKE, its wildcards taken literally."""
    return "%" + re.sub(r"([\\%_])", r"\\\1", value) + "%"


def prefix_query(value: str) -> str:
    """A tsquery text: every word of ``value`` as a prefix, all required."""
    words = _WORD.findall(value.lower())
    return " & ".join("'" + w.replace("'", "''") + "':*" for w in words)


def search_words(value: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(value)]


@dataclass
class Sql:
    """Query parameters gathered while compiling, named p0, p1, ..."""

    params: dict[str, Any] = field(default_factory=dict)
    # The account's parameter (compile_query sets it): conditions that read
    # tables without an address column narrow to the account with it.
    account: str = "NULL::uuid"

    def __call__(self, value: Any) -> str:
        name = f"p{len(self.params)}"
        self.params[name] = value
        return f"%({name})s"


def _body_ids(sql: Sql, words: str) -> str:
    """The emails whose body words match: indexed ones from ``mta.email_words``, and
    the account's delivered mail the words job has not reached yet from its
    queued text, the same words made at search time (a second's mail, as a
    rule): the results do not move when the job runs (docs/mail.md, "JMAP Email
    semantics")."""
    query = f"plainto_tsquery('simple', {words})"
    return (
        f"SELECT email_id FROM mta.email_words WHERE words @@ {query}"
        f" UNION SELECT b.email_id FROM mta.words_backlog b"
        f" JOIN mta.emails q ON q.id = b.email_id AND q.address_id = {sql.account}"
        f" WHERE to_tsvector('simple', b.body) @@ {query}"
    )


def _thread_has(sql: Sql, alias: str, kw: str) -> str:
    return (
        f"EXISTS (SELECT 1 FROM mta.emails t WHERE t.thread_id = {alias}.thread_id"
        f" AND t.keywords @> ARRAY[{sql(kw)}]::text[])"
    )


def _thread_all(sql: Sql, alias: str, kw: str) -> str:
    return (
        f"NOT EXISTS (SELECT 1 FROM mta.emails t WHERE t.thread_id = {alias}.thread_id"
        f" AND NOT t.keywords @> ARRAY[{sql(kw)}]::text[])"
    )


def condition(sql: Sql, filt: object, a: str = "e") -> str:
    """One FilterOperator or FilterCondition as SQL over the emails row ``a``."""
    if not isinstance(filt, Mapping):
        raise QueryError("invalidArguments", "a filter is an object")
    if "operator" in filt:
        op = filt["operator"]
        conds = filt.get("conditions")
        if op not in ("AND", "OR", "NOT") or not isinstance(conds, list):
            raise QueryError("unsupportedFilter", f"bad operator {op!r}")
        parts = [condition(sql, c, a) for c in conds]
        if op == "AND":
            return "(" + " AND ".join(parts) + ")" if parts else "true"
        joined = "(" + " OR ".join(parts) + ")" if parts else "false"
        return joined if op == "OR" else f"NOT {joined}"
    unknown = set(filt) - CONDITIONS
    if unknown:
        raise QueryError("unsupportedFilter", f"unknown conditions: {', '.join(sorted(unknown))}")
    out: list[str] = []
    for name, value in filt.items():
        out.append(_one(sql, a, name, value))
    return "(" + " AND ".join(out) + ")" if out else "true"


def _one(sql: Sql, a: str, name: str, value: Any) -> str:
    match name:
        case "inMailbox":
            mailbox = value if is_id(value) else "00000000-0000-0000-0000-000000000000"
            if not isinstance(value, str):
                raise QueryError("invalidArguments", "inMailbox is an Id")
            # OFFSET 0 keeps this a probe of the primary key per candidate row: as a
            # semi-join the planner hashed the whole mailbox's memberships (100,000
            # rows) to test the few hundred emails a word matched.
            return (
                f"EXISTS (SELECT 1 FROM mta.email_mailboxes m WHERE m.email_id = {a}.id"
                f" AND m.mailbox_id = {sql(mailbox)}::uuid OFFSET 0)"
            )
        case "inMailboxOtherThan":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise QueryError("invalidArguments", "inMailboxOtherThan is a list of Ids")
            ids = [v for v in value if is_id(v)]
            return (
                f"EXISTS (SELECT 1 FROM mta.email_mailboxes m WHERE m.email_id = {a}.id"
                f" AND m.mailbox_id <> ALL({sql(ids)}::uuid[]))"
            )
        case "before":
            return f"{a}.received_at < {sql(_date(value))}"
        case "after":
            return f"{a}.received_at >= {sql(_date(value))}"
        case "minSize":
            return f"{a}.size >= {sql(_uint(value, name))}"
        case "maxSize":
            return f"{a}.size < {sql(_uint(value, name))}"
        case "allInThreadHaveKeyword":
            return _thread_all(sql, a, keyword(value))
        case "someInThreadHaveKeyword":
            return _thread_has(sql, a, keyword(value))
        case "noneInThreadHaveKeyword":
            return "NOT " + _thread_has(sql, a, keyword(value))
        case "hasKeyword":
            return f"{a}.keywords @> ARRAY[{sql(keyword(value))}]::text[]"
        case "notKeyword":
            return f"NOT {a}.keywords @> ARRAY[{sql(keyword(value))}]::text[]"
        case "hasAttachment":
            if not isinstance(value, bool):
                raise QueryError("invalidArguments", "hasAttachment is a boolean")
            return f"{a}.has_attachment = {sql(value)}"
        case "text":
            # One set of ids from the three GIN indexes (a semi-join, or one
            # hashed set under OR/NOT): the body's words are a table of their own.
            words = sql(_text(value, name))
            return (
                f"{a}.id IN (SELECT id FROM mta.emails WHERE search @@ plainto_tsquery('simple', {words})"
                f" UNION SELECT id FROM mta.emails"
                f" WHERE from_search @@ plainto_tsquery('simple', translate({words}, '@.', '  '))"
                f" UNION {_body_ids(sql, words)})"
            )
        case "body":
            return f"{a}.id IN ({_body_ids(sql, sql(_text(value, name)))})"
        case "from":
            if _ADDRESS.match(value if isinstance(value, str) else ""):
                return f"{a}.from_emails @> jsonb_build_array(lower({sql(value.strip())}))"
            query = prefix_query(_text(value, name))
            if not query:
                return "true"
            return f"{a}.from_search @@ to_tsquery('simple', {sql(query)})"
        case "to" | "cc" | "bcc":
            return f"{a}.{name}_addrs::text ILIKE {sql(like(_text(value, name)))}"
        case "subject":
            return f"{a}.subject ILIKE {sql(like(_text(value, name)))}"
        case "header":
            if (
                not isinstance(value, list)
                or not 1 <= len(value) <= 2
                or not all(isinstance(v, str) for v in value)
            ):
                raise QueryError("invalidArguments", "header is [name] or [name, value]")
            values = f"mta.header_values(ib.data, {sql(value[0])})"
            test = (
                f"cardinality({values}) > 0"
                if len(value) == 1
                else f"EXISTS (SELECT 1 FROM unnest({values}) v WHERE v ILIKE {sql(like(value[1]))})"
            )
            return (
                f"EXISTS (SELECT 1 FROM mta.inline_blobs ib WHERE ib.blob_id = {a}.blob_id"
                f" AND {test})"
            )
    raise QueryError("unsupportedFilter", name)


@dataclass(frozen=True)
class Key:
    """One sort key: an SQL expression (never NULL) and its direction."""

    expr: str
    ascending: bool


def sort_keys(sql: Sql, sort: object, a: str, driver: str | None) -> list[Key]:
    """The comparators as SQL keys, with the id as the last tie-breaker (a stable order)."""
    if sort is None:
        sort = DEFAULT_SORT
    if not isinstance(sort, list):
        raise QueryError("invalidArguments", "sort is a list of Comparators")
    keys: list[Key] = []
    received = f"{driver}.received_at" if driver else f"{a}.received_at"
    for comp in sort:
        if not isinstance(comp, Mapping) or not isinstance(comp.get("property"), str):
            raise QueryError("invalidArguments", "a Comparator has a property")
        asc = comp.get("isAscending", True)
        if not isinstance(asc, bool):
            raise QueryError("invalidArguments", "isAscending is a boolean")
        collation = comp.get("collation")
        if collation is not None and collation not in COLLATIONS:
            raise QueryError("unsupportedSort", f"collation {collation!r}")
        prop = comp["property"]
        match prop:
            case "receivedAt":
                expr = received
            case "sentAt":
                expr = f"coalesce({a}.sent_at, {a}.received_at)"
            case "size":
                expr = f"{a}.size"
            case "from":
                expr = f"{a}.sort_from"
            case "to":
                expr = f"{a}.sort_to"
            case "subject":
                expr = f"{a}.sort_subject"
            case "hasKeyword":
                expr = f"({a}.keywords @> ARRAY[{sql(keyword(comp.get('keyword')))}]::text[])"
            case "allInThreadHaveKeyword":
                expr = _thread_all(sql, a, keyword(comp.get("keyword")))
            case "someInThreadHaveKeyword":
                expr = _thread_has(sql, a, keyword(comp.get("keyword")))
            case _:
                raise QueryError("unsupportedSort", f"cannot sort by {prop!r}")
        keys.append(Key(expr, asc))
    last = keys[-1].ascending if keys else False
    keys.append(Key(f"{driver}.email_id" if driver else f"{a}.id", last))
    return keys


def order_by(keys: list[Key]) -> str:
    return ", ".join(f"{k.expr} {'ASC' if k.ascending else 'DESC'}" for k in keys)


def before(k2: list[Key], k1: list[Key]) -> str:
    """SQL true when the row of keys ``k2`` comes before the row of ``k1`` in the order."""
    ors = []
    for i, key in enumerate(k1):
        eqs = [f"{k2[j].expr} = {k1[j].expr}" for j in range(i)]
        op = "<" if key.ascending else ">"
        ors.append("(" + " AND ".join([*eqs, f"{k2[i].expr} {op} {key.expr}"]) + ")")
    return "(" + " OR ".join(ors) + ")"


def _pinned_mailbox(filt: object) -> str | None:
    """The mailbox every result must be in, when the filter says so at its top."""
    if not isinstance(filt, Mapping):
        return None
    if "operator" not in filt:
        value = filt.get("inMailbox")
        return value if is_id(value) else None
    if filt.get("operator") == "AND":
        for cond in filt.get("conditions") or []:
            found = _pinned_mailbox(cond)
            if found:
                return found
    return None


def _without_pinned(filt: Any, mailbox: str) -> Any:
    """The filter without the inMailbox condition the driving table already applies."""
    if "operator" not in filt:
        rest = {k: v for k, v in filt.items() if k != "inMailbox"}
        return rest or None
    conditions = [
        _without_pinned(c, mailbox) if _pinned_mailbox(c) == mailbox else c
        for c in filt["conditions"]
    ]
    return {"operator": "AND", "conditions": [c for c in conditions if c is not None]}


_FULLTEXT = {"text", "body", "from"}


def _has_fulltext(filt: Any) -> bool:
    """A word condition every result must meet: the index of words drives the query."""
    if not isinstance(filt, Mapping):
        return False
    if "operator" not in filt:
        return bool(_FULLTEXT & set(filt))
    return filt.get("operator") == "AND" and any(
        _has_fulltext(c) for c in filt.get("conditions") or []
    )


@dataclass
class Plan:
    """An Email/query compiled: FROM and WHERE, the ORDER BY keys, how to count.

    ``base`` is the WHERE without the collapse clause: the number of threads
    among the emails it selects is the number of collapsed results.
    """

    sql: Sql
    source: str
    base: str
    where: str
    keys: list[Key]
    id_expr: str
    thread_expr: str
    mailbox: str | None
    account_id: str
    only_mailbox: bool
    collapse: bool
    # The word index drives: every match is read and sorted anyway, so the
    # page and its total come from one statement.
    words_first: bool = False
    # What the total depends on: the count statement and its parameters as compiled
    # (paging adds parameters later).
    fingerprint: str = ""

    def seal(self) -> Plan:
        self.fingerprint = self.count_sql() + repr(sorted(self.sql.params.items()))
        return self

    def select(self, what: str) -> str:
        return f"SELECT {what} FROM {self.source} WHERE {self.where}"

    def page_sql(self, position: int, limit: int, *, with_total: bool = False) -> str:
        total = ", count(*) OVER () AS total" if with_total else ""
        return (
            f"{self.select(f'{self.id_expr}::text AS id{total}')} ORDER BY {order_by(self.keys)}"
            f" OFFSET {self.sql(position)} LIMIT {self.sql(limit)}"
        )

    def count_sql(self) -> str:
        if self.collapse:
            return (
                f"SELECT count(*) FROM (SELECT DISTINCT {self.thread_expr} FROM {self.source}"
                f" WHERE {self.base}) t"
            )
        return self.select("count(*)")

    def index_sql(self, ids: list[str]) -> str:
        numbered = self.select(
            f"{self.id_expr}::text AS id, row_number() OVER (ORDER BY {order_by(self.keys)}) - 1 AS n"
        )
        return f"SELECT id, n FROM ({numbered}) r WHERE id = ANY({self.sql(ids)}::text[])"


def compile_query(account_id: str, args: Mapping[str, Any]) -> Plan:
    """The query's SQL, driven from whichever index serves it:

    * a mailbox and nothing else, newest or oldest first: the membership rows
      alone (``email_mailboxes_listing``; collapse probes ``email_mailboxes_threads``);
    * a mailbox and other conditions: the membership rows in order, joined to
      the emails, filtered on the way down the index;
    * a word condition (text, body, from): the GIN indexes of words first, the
      mailbox as an EXISTS probe, a sort of the matches;
    * no mailbox: the account's emails (``emails_address_received``).
    """
    sql = Sql()
    filt = args.get("filter")
    if filt is not None:
        condition(Sql(), filt)  # every condition checked, whatever the plan keeps
    collapse = args.get("collapseThreads", False)
    if not isinstance(collapse, bool):
        raise QueryError("invalidArguments", "collapseThreads is a boolean")
    sort = args.get("sort")
    account = sql(account_id)
    sql.account = f"{account}::uuid"
    mailbox = _pinned_mailbox(filt)
    words_first = _has_fulltext(filt)
    if mailbox and words_first:
        mailbox = None  # the words drive; inMailbox stays in the filter as a probe
    if mailbox:
        filt = _without_pinned(filt, mailbox)
    filter_sql = condition(sql, filt) if filt is not None else "true"
    by_arrival = all(
        isinstance(c, Mapping) and c.get("property") == "receivedAt" for c in (sort or DEFAULT_SORT)
    )
    if mailbox and filter_sql == "true" and by_arrival:
        box = sql(mailbox)
        keys = sort_keys(sql, sort, "em", "em")
        plan = Plan(
            sql, "mta.email_mailboxes em",
            f"em.mailbox_id = {box}::uuid AND EXISTS (SELECT 1 FROM mta.mailboxes mb"
            f" WHERE mb.id = {box}::uuid AND mb.address_id = {account}::uuid)",
            "", keys, "em.email_id", "em.thread_id", mailbox, account_id, True, collapse,
        )  # fmt: skip
        plan.where = plan.base
        if collapse:
            keys2 = sort_keys(sql, sort, "em2", "em2")
            plan.where += (
                f" AND NOT EXISTS (SELECT 1 FROM mta.email_mailboxes em2 WHERE em2.mailbox_id = {box}::uuid"
                f" AND em2.thread_id = em.thread_id AND em2.email_id <> em.email_id AND {before(keys2, keys)})"
            )
        return plan.seal()
    if mailbox:
        box = sql(mailbox)
        source = "mta.email_mailboxes em JOIN mta.emails e ON e.id = em.email_id"
        base = f"em.mailbox_id = {box}::uuid AND e.address_id = {account}::uuid"
    else:
        source = "mta.emails e"
        base = f"e.address_id = {account}::uuid"
    keys = sort_keys(sql, sort, "e", "em" if mailbox else None)
    if filter_sql != "true":
        base += f" AND {filter_sql}"
    plan = Plan(
        sql, source, base, base, keys, "e.id", "e.thread_id", mailbox, account_id,
        bool(mailbox) and filter_sql == "true", collapse, words_first,
    )  # fmt: skip
    if collapse:
        # The same filter and keys over the thread-mate e2 (em2): compiled again.
        filter2 = condition(sql, filt, "e2") if filt is not None else "true"
        keys2 = sort_keys(sql, sort, "e2", "em2" if mailbox else None)
        if mailbox:
            inner = (
                "SELECT 1 FROM mta.email_mailboxes em2 JOIN mta.emails e2 ON e2.id = em2.email_id"
                f" WHERE em2.mailbox_id = {sql(mailbox)}::uuid AND em2.thread_id = em.thread_id"
            )
        else:
            inner = "SELECT 1 FROM mta.emails e2 WHERE e2.thread_id = e.thread_id"
        plan.where += (
            f" AND NOT EXISTS ({inner} AND e2.id <> e.id AND {filter2} AND {before(keys2, keys)})"
        )
    return plan.seal()


def count_statement(plan: Plan) -> tuple[str, Mapping[str, Any]]:
    """The statement that counts the plan's total, and its parameters."""
    if plan.only_mailbox:
        # The mailbox alone: its count of emails, or of threads (one row per
        # thread in mta.mailbox_threads, migration 0060), kept by the store's triggers.
        sql = (
            "SELECT count(*) FROM mta.mailbox_threads t JOIN mta.mailboxes m ON m.id = t.mailbox_id"
            " WHERE t.mailbox_id = %(m)s AND m.address_id = %(a)s"
            if plan.collapse
            else "SELECT total_emails FROM mta.mailboxes WHERE id = %(m)s AND address_id = %(a)s"
        )
        return sql, {"m": plan.mailbox, "a": plan.account_id}
    return plan.count_sql(), plan.sql.params


async def count(conn: Conn, plan: Plan) -> int:
    return int(await fetch_val(conn, *count_statement(plan)) or 0)


async def positions(conn: Conn, plan: Plan, ids: list[str]) -> dict[str, int]:
    """The 0-based positions of ``ids`` in the full result list."""
    rows = await fetch_all(conn, plan.index_sql(ids), plan.sql.params)
    return {r["id"]: int(r["n"]) for r in rows}


async def page(
    conn: Conn, plan: Plan, position: int, limit: int, *, with_total: bool = False
) -> tuple[list[str], int | None]:
    """The ids from ``position`` on (at most ``limit``), and with ``with_total`` the
    total counted by the same statement (None when the page is empty)."""
    rows = await fetch_all(
        conn, plan.page_sql(position, limit, with_total=with_total), plan.sql.params
    )
    total = int(rows[0]["total"]) if with_total and rows else None
    return [r["id"] for r in rows], total
