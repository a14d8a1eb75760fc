"""The command handlers (RFC 9051 6 and the extensions listed in CAPABILITY).

Each handler takes the connection, the tag and the tokens after the command
name, sends its untagged responses through the connection, and returns the
tagged completion ("OK ...", "NO ...", "BAD ..."). Grammar errors raise
parser.ParseError (the server answers BAD); store refusals raise
store.Refused (NO with its response code).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from common.db import transaction
from mail import directory
from mta.imap import auth, fetch, mime, search, sort, store, thread
from mta.imap.parser import (
    Atom,
    Key,
    ParseError,
    Section,
    String,
    Tokens,
    astring,
    date_time,
    decode_mailbox,
    encode_mailbox,
    fetch_atts,
    flag_list,
    format_date_time,
    format_ordered_set,
    format_uid_set,
    search_keys,
    sequence_set,
    text_of,
)
from mta.imap.responses import (
    FLAGS,
    PERMANENT_FLAGS,
    flags_of,
    keyword_of,
    nstring,
    plist,
    string,
)
from mta.imap.session import AUTHENTICATED, LOGOUT, NOT_AUTHENTICATED, SELECTED, Selected
from mta.store import imap_uids, mailboxes

if TYPE_CHECKING:
    from mta.imap.server import Connection

log = logging.getLogger(__name__)

Handler = Callable[["Connection", str, Tokens, bool], Awaitable[str]]
# Messages per round trip: whole messages are held in memory a batch at a
# time (two: the next is read while one is sent); flags and envelopes are
# small, and a batch is read while the one before is rendered, so a few
# round trips cost nothing and let PostgreSQL and this process overlap.
FETCH_BATCH = 500
FETCH_BATCH_SMALL = 2000
# SORT and THREAD keys per round trip (a few short columns per message).
SORT_BATCH = 10000


def capabilities(c: Connection) -> str:
    s = c.session
    caps = ["IMAP4rev2", "IMAP4rev1", "LITERAL+", "SASL-IR", "ID", "ENABLE", "IDLE", "NAMESPACE"]
    caps += ["UNSELECT", "UIDPLUS", "MOVE", "SPECIAL-USE", "LIST-EXTENDED", "LIST-STATUS"]
    caps += ["CHILDREN", "CONDSTORE", "QRESYNC", "ESEARCH", "SEARCHRES", "BINARY", "STATUS=SIZE"]
    caps += [f"APPENDLIMIT={c.ctx.config.max_message_size}", "QUOTA", "QUOTA=RES-STORAGE"]
    caps += ["SORT", "SORT=DISPLAY", "ESORT", "THREAD=ORDEREDSUBJECT", "THREAD=REFERENCES"]
    if s.state in (AUTHENTICATED, SELECTED) and not c.link.compressed:
        caps.append("COMPRESS=DEFLATE")
    if s.state == NOT_AUTHENTICATED:
        if not s.tls and c.tls_context is not None:
            caps.append("STARTTLS")
        if c.may_login:
            caps += ["AUTH=PLAIN", "AUTH=OAUTHBEARER", "AUTH=XOAUTH2"]
        else:
            caps.append("LOGINDISABLED")
    return " ".join(caps)


# -- any state ---------------------------------------------------------------------


async def cmd_capability(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    toks.end()
    c.untagged(f"CAPABILITY {capabilities(c)}")
    return "OK CAPABILITY completed"


async def cmd_noop(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    toks.end()
    await c.catch_up()
    return "OK NOOP completed"


async def cmd_check(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    return await cmd_noop(c, tag, toks, uid)


async def cmd_logout(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    toks.end()
    c.untagged("BYE logging out")
    c.session.state = LOGOUT
    return "OK LOGOUT completed"


async def cmd_id(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    toks.sp()
    toks.item()  # the client's fields: not kept
    toks.end()
    c.untagged('ID ("name" "mta imap" "vendor" "self-hosted mail")')
    return "OK ID completed"


async def cmd_enable(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    c.require(AUTHENTICATED, SELECTED)
    toks.sp()
    names = [text_of(i).upper() for i in toks.items()]
    if not names:
        raise ParseError("ENABLE needs a capability")
    done = []
    for name in names:
        if (
            name in ("IMAP4REV2", "CONDSTORE", "QRESYNC", "UTF8=ACCEPT")
            and name not in c.session.enabled
        ):
            c.session.enabled.add(name)
            done.append(name)
            if name in ("CONDSTORE", "QRESYNC"):
                c.session.condstore = True
    c.untagged("ENABLED" + "".join(f" {n if n != 'IMAP4REV2' else 'IMAP4rev2'}" for n in done))
    return "OK ENABLE completed"


async def cmd_compress(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    """RFC 4978: deflate both ways after the OK. Offered once signed in, as
    Dovecot does: by then TLS (which must come first) is settled."""
    c.require(AUTHENTICATED, SELECTED)
    toks.sp()
    mechanism = text_of(toks.item()).upper()
    toks.end()
    if c.link.compressed:
        return "NO [COMPRESSIONACTIVE] DEFLATE is already on"
    if mechanism != "DEFLATE":
        return "NO unknown compression mechanism"
    c.compress_after()
    return "OK DEFLATE active"


# -- not authenticated -------------------------------------------------------------


async def cmd_starttls(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    toks.end()
    c.require(NOT_AUTHENTICATED)
    if c.session.tls or c.tls_context is None:
        return "BAD TLS is already on" if c.session.tls else "NO STARTTLS is not offered here"
    c.start_tls_after(tag)
    return "OK Begin TLS negotiation now"


async def cmd_login(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    c.require(NOT_AUTHENTICATED)
    toks.sp()
    login = astring(toks.item()).decode("utf-8", "replace")
    toks.sp()
    password = astring(toks.item()).decode("utf-8", "replace")
    toks.end()
    if not c.may_login:
        return "NO [PRIVACYREQUIRED] LOGIN needs TLS first (STARTTLS)"
    return await _signed_in(c, await c.auth.password(c.session.ip, login, password))


async def _signed_in(c: Connection, found: directory.Principal | str) -> str:
    if isinstance(found, str):
        await c.slow_down()
        return f"NO {found}"
    c.session.principal = found
    c.session.state = AUTHENTICATED
    async with c.db.transaction() as conn:
        # An address made before its folders were (delivery does the same).
        await mailboxes.ensure_defaults(conn, found.address_id, c.now())
    c.signed_in()
    return f"OK [CAPABILITY {capabilities(c)}] Logged in"


async def cmd_authenticate(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    c.require(NOT_AUTHENTICATED)
    toks.sp()
    mechanism = toks.word().upper()
    initial: str | None = None
    if toks.maybe_sp():
        initial = text_of(toks.item())
    toks.end()
    if mechanism not in ("PLAIN", "OAUTHBEARER", "XOAUTH2"):
        return "NO [CANNOT] unsupported mechanism"
    if not c.may_login:
        return "NO [PRIVACYREQUIRED] AUTHENTICATE needs TLS first (STARTTLS)"
    if initial is None:
        c.send(b"+ \r\n")
        line = await c.read_continuation()
        if line is None:
            return "BAD AUTHENTICATE ended"
        initial = line
    if initial == "*":
        return "BAD AUTHENTICATE cancelled"
    try:
        message = auth.b64(initial)
        if mechanism == "PLAIN":
            login, password = auth.plain(message)
            return await _signed_in(c, await c.auth.password(c.session.ip, login, password))
        bearer = auth.oauthbearer(message) if mechanism == "OAUTHBEARER" else auth.xoauth2(message)
    except auth.SaslError as exc:
        return f"BAD {exc}"
    found = await c.auth.bearer(c.session.ip, bearer)
    if isinstance(found, str):
        # RFC 7628 3.2.2: an error message, then the client's dummy reply, then NO.
        import base64
        import json

        challenge = json.dumps({"status": "invalid_token", "scope": "mail"}).encode()
        c.send(b"+ " + base64.b64encode(challenge) + b"\r\n")
        await c.read_continuation()
    return await _signed_in(c, found)


# -- authenticated -----------------------------------------------------------------


def _mailbox_name(c: Connection, item: Any) -> str:
    name = decode_mailbox(astring(item), c.session.utf8)
    if name.upper() == "INBOX":
        return "INBOX"
    return name


def _wire_name(c: Connection, name: str) -> bytes:
    from mta.imap.responses import astring as wire

    return wire(encode_mailbox(name, c.session.utf8))


async def cmd_select(
    c: Connection, tag: str, toks: Tokens, uid: bool, *, readonly: bool = False
) -> str:
    c.require(AUTHENTICATED, SELECTED)
    toks.sp()
    name = _mailbox_name(c, toks.item())
    qresync: list[Any] | None = None
    if toks.maybe_sp():
        params = toks.item()
        if not isinstance(params, list):
            raise ParseError("SELECT parameters are a list")
        i = 0
        while i < len(params):
            p = text_of(params[i]).upper()
            if p == "CONDSTORE":
                c.session.condstore = True
            elif p == "QRESYNC" and i + 1 < len(params) and isinstance(params[i + 1], list):
                if not c.session.qresync:
                    return "BAD QRESYNC must be enabled first"
                qresync = params[i + 1]
                i += 1
            else:
                raise ParseError(f"unknown SELECT parameter {p}")
            i += 1
    toks.end()
    if c.session.selected is not None:
        c.session.selected = None
        c.session.state = AUTHENTICATED
        if c.session.condstore or c.session.rev2:
            c.untagged("OK [CLOSED] previous mailbox closed")
    async with c.db.connection() as conn:
        box = store.find(await store.folders(conn, c.session.address_id), name)
        if box is None:
            return "NO [NONEXISTENT] no such mailbox"
        view = await store.open_view(conn, c.session.address_id, box.id)
        keywords = await _mailbox_keywords(conn, c, view)
    sel = Selected(box.name, view, readonly)
    c.untagged(f"{len(view.uids)} EXISTS")
    if not c.session.rev2:
        c.untagged("0 RECENT")
    c.untagged(f"FLAGS {FLAGS[:-1]}{keywords})")
    c.untagged(f"OK [PERMANENTFLAGS {PERMANENT_FLAGS if not readonly else '()'}] flags kept")
    c.untagged(f"OK [UIDVALIDITY {view.uid_validity}] UIDs valid")
    c.untagged(f"OK [UIDNEXT {view.uid_next}] predicted next UID")
    c.untagged(f'LIST () "/" {_wire_name(c, box.name).decode()}')
    if c.session.condstore:
        c.untagged(f"OK [HIGHESTMODSEQ {view.modseq}] highest")
    c.session.selected = sel
    c.session.state = SELECTED
    if qresync is not None:
        await _qresync(c, sel, qresync)
    mode = "READ-ONLY" if readonly else "READ-WRITE"
    return f"OK [{mode}] {'EXAMINE' if readonly else 'SELECT'} completed"


async def _mailbox_keywords(conn: Any, c: Connection, view: store.View) -> str:
    """Keywords in use beyond the system flags, for FLAGS (one query, first 1000)."""
    used = await imap_uids.keywords_in_use(conn, c.session.address_id, view.email_ids[-1000:])
    extra = sorted(used - set(store_keywords()))
    return "".join(f" {k}" for k in extra if k.isascii())


def store_keywords() -> list[str]:
    return [
        "$seen",
        "$answered",
        "$flagged",
        "$draft",
        "$deleted",
        "$forwarded",
        "$junk",
        "$notjunk",
    ]


async def _qresync(c: Connection, sel: Selected, params: list[Any]) -> None:
    """SELECT ... (QRESYNC (uidvalidity modseq [known-uids])) (RFC 7162 3.2.5)."""
    if len(params) < 2:
        raise ParseError("QRESYNC takes a UIDVALIDITY and a MODSEQ")
    validity, since = int(text_of(params[0])), int(text_of(params[1]))
    if validity != sel.view.uid_validity:
        return
    async with c.db.connection() as conn:
        gone = await imap_uids.vanished_since(conn, sel.view.mailbox_id, since)
        changed = await imap_uids.changed_since(conn, c.session.address_id, since)
    if gone:
        c.untagged(f"VANISHED (EARLIER) {format_uid_set(gone)}")
    wanted = (
        range(len(sel))
        if changed is None
        else [i for i, e in enumerate(sel.view.email_ids) if e in changed]
    )
    await _send_fetch(c, sel, list(wanted), ["FLAGS"], uid=True)


async def cmd_examine(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    return await cmd_select(c, tag, toks, uid, readonly=True)


async def cmd_create(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    c.require(AUTHENTICATED, SELECTED)
    toks.sp()
    name = _mailbox_name(c, toks.item())
    if toks.maybe_sp():
        toks.item()  # CREATE-PARAMS (RFC 4466): USE (\Sent) and the like, not kept
    toks.end()
    if name == "INBOX":
        return "NO [ALREADYEXISTS] INBOX exists"
    async with c.db.connection() as conn:
        await store.create(conn, c.session.address_id, name, c.now())
    return "OK CREATE completed"


async def cmd_delete(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    c.require(AUTHENTICATED, SELECTED)
    toks.sp()
    name = _mailbox_name(c, toks.item())
    toks.end()
    sel = c.session.selected
    async with c.db.connection() as conn:
        await store.delete(conn, c.session.address_id, name, c.now())
    if sel is not None and sel.name.lower() == name.lower():
        c.session.selected = None
        c.session.state = AUTHENTICATED
        c.untagged("BYE the selected mailbox was deleted")
        c.session.state = LOGOUT
    return "OK DELETE completed"


async def cmd_rename(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    c.require(AUTHENTICATED, SELECTED)
    toks.sp()
    old = _mailbox_name(c, toks.item())
    toks.sp()
    new = _mailbox_name(c, toks.item())
    toks.end()
    async with c.db.connection() as conn:
        await store.rename(conn, c.session.address_id, old, new, c.now())
    return "OK RENAME completed"


async def cmd_subscribe(
    c: Connection, tag: str, toks: Tokens, uid: bool, *, on: bool = True
) -> str:
    c.require(AUTHENTICATED, SELECTED)
    toks.sp()
    name = _mailbox_name(c, toks.item())
    toks.end()
    async with c.db.connection() as conn:
        await store.subscribe(conn, c.session.address_id, name, on, c.now())
    return f"OK {'SUBSCRIBE' if on else 'UNSUBSCRIBE'} completed"


async def cmd_unsubscribe(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    return await cmd_subscribe(c, tag, toks, uid, on=False)


def _pattern(pattern: str) -> Any:
    import re

    regex = "".join(
        ".*" if ch == "*" else "[^/]*" if ch == "%" else re.escape(ch) for ch in pattern
    )
    return re.compile(f"^{regex}$", re.IGNORECASE)


async def cmd_list(c: Connection, tag: str, toks: Tokens, uid: bool, *, lsub: bool = False) -> str:
    c.require(AUTHENTICATED, SELECTED)
    toks.sp()
    items = toks.items()
    selection: list[str] = []
    if items and isinstance(items[0], list) and not lsub:
        first = items.pop(0)
        assert isinstance(first, list)
        selection = [text_of(i).upper() for i in first]
    if len(items) < 2:
        raise ParseError("LIST takes a reference and a pattern")
    reference = decode_mailbox(astring(items[0]), c.session.utf8)
    pats = items[1] if isinstance(items[1], list) else [items[1]]
    patterns = [reference + decode_mailbox(astring(p), c.session.utf8) for p in pats]
    returns: list[str] = []
    status_items: list[str] = []
    rest = items[2:]
    if rest:
        if len(rest) != 2 or text_of(rest[0]).upper() != "RETURN" or not isinstance(rest[1], list):
            raise ParseError("LIST ... RETURN (options)")
        opts = rest[1]
        i = 0
        while i < len(opts):
            opt = text_of(opts[i]).upper()
            returns.append(opt)
            if opt == "STATUS" and i + 1 < len(opts) and isinstance(opts[i + 1], list):
                status_items = [text_of(s).upper() for s in opts[i + 1]]
                i += 1
            i += 1
    if patterns == [""] or (len(pats) == 1 and astring(pats[0]) == b"" and not lsub):
        c.untagged('LIST (\\Noselect) "/" ""')
        return "OK LIST completed"
    subscribed_only = lsub or "SUBSCRIBED" in selection
    regexes = [_pattern(p) for p in patterns]
    async with c.db.connection() as conn:
        found = await store.folders(conn, c.session.address_id)
        for box in found:
            if not any(r.match(box.name) for r in regexes):
                continue
            if subscribed_only and not box.subscribed:
                continue
            attrs = ["\\HasChildren" if box.has_children else "\\HasNoChildren"]
            if box.role in store.ROLE_ATTRIBUTES:
                attrs.append(store.ROLE_ATTRIBUTES[box.role])
            if box.subscribed and ("SUBSCRIBED" in selection or "SUBSCRIBED" in returns):
                attrs.append("\\Subscribed")
            if "SPECIAL-USE" in selection and box.role not in store.ROLE_ATTRIBUTES:
                continue
            verb = "LSUB" if lsub else "LIST"
            c.untagged(f'{verb} ({" ".join(attrs)}) "/" {_wire_name(c, box.name).decode()}')
            if status_items:
                await _status(c, conn, box, status_items)
    return f"OK {'LSUB' if lsub else 'LIST'} completed"


async def cmd_lsub(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    return await cmd_list(c, tag, toks, uid, lsub=True)


async def cmd_namespace(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    c.require(AUTHENTICATED, SELECTED)
    toks.end()
    c.untagged('NAMESPACE (("" "/")) NIL NIL')
    return "OK NAMESPACE completed"


async def _status(c: Connection, conn: Any, box: store.Folder, items: list[str]) -> None:
    async with transaction(conn):
        state = await imap_uids.assign(conn, box.id)
        modseq = (
            await imap_uids.highest_modseq(conn, c.session.address_id, box.id)
            if "HIGHESTMODSEQ" in items
            else 0
        )
        size = await imap_uids.mailbox_size(conn, box.id) if "SIZE" in items else 0
    values = {
        "MESSAGES": box.total,
        "UNSEEN": box.unread,
        "UIDNEXT": state.uid_next,
        "UIDVALIDITY": state.uid_validity,
        "RECENT": 0,
        "DELETED": 0,
        "SIZE": size,
        "HIGHESTMODSEQ": modseq,
    }
    out = []
    for item in items:
        if item not in values:
            raise ParseError(f"unknown STATUS item {item}")
        out.append(f"{item} {values[item]}")
    c.untagged(f"STATUS {_wire_name(c, box.name).decode()} ({' '.join(out)})")


async def cmd_status(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    c.require(AUTHENTICATED, SELECTED)
    toks.sp()
    name = _mailbox_name(c, toks.item())
    toks.sp()
    items = toks.item()
    toks.end()
    if not isinstance(items, list) or not items:
        raise ParseError("STATUS takes a list of items")
    async with c.db.connection() as conn:
        box = store.find(await store.folders(conn, c.session.address_id), name)
        if box is None:
            return "NO [NONEXISTENT] no such mailbox"
        await _status(c, conn, box, [text_of(i).upper() for i in items])
    return "OK STATUS completed"


async def cmd_append(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    c.require(AUTHENTICATED, SELECTED)
    toks.sp()
    name = _mailbox_name(c, toks.item())
    toks.sp()
    items = toks.items()
    last = items.pop() if items else None
    if not isinstance(last, String) or not last.literal:
        raise ParseError("APPEND takes a message literal")
    data = last.value
    flags: list[str] = []
    when: datetime | None = None
    for item in items:
        if isinstance(item, list):
            flags = flag_list(item)
        else:
            when = date_time(item)
    if len(data) > c.ctx.config.max_message_size:
        return "NO [TOOBIG] the message is larger than APPENDLIMIT"
    if b"\x00" in data:
        return "NO [CANNOT] a message cannot hold NUL bytes"
    from mta.jmap.email import compose
    from mta.jmap.email.write import store_message

    now = c.now()
    async with c.db.connection() as conn:
        box = store.find(await store.folders(conn, c.session.address_id), name)
        if box is None:
            return "NO [TRYCREATE] no such mailbox"
        try:
            async with transaction(conn):
                created = await store_message(
                    c.email_ctx,
                    conn,
                    c.session.address_id,
                    data,
                    [box.id],
                    sorted({keyword_of(f) for f in flags}),
                    when or now,
                    now,
                )
                state = await imap_uids.assign(conn, box.id)
                uids = await imap_uids.uids_of(conn, box.id, [created["id"]])
        except compose.Invalid as exc:
            if exc.type == "overQuota":
                return "NO [OVERQUOTA] the mailbox is over its quota or the plan's storage"
            return f"NO [CANNOT] {exc}"
    await c.catch_up()
    return f"OK [APPENDUID {state.uid_validity} {uids[created['id']]}] APPEND completed"


async def cmd_getquotaroot(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    c.require(AUTHENTICATED, SELECTED)
    toks.sp()
    name = _mailbox_name(c, toks.item())
    toks.end()
    c.untagged(f'QUOTAROOT {_wire_name(c, name).decode()} ""')
    await _quota(c)
    return "OK GETQUOTAROOT completed"


async def cmd_getquota(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    c.require(AUTHENTICATED, SELECTED)
    toks.sp()
    root = astring(toks.item())
    toks.end()
    if root != b"":
        return "NO [NONEXISTENT] no such quota root"
    await _quota(c)
    return "OK GETQUOTA completed"


async def _quota(c: Connection) -> None:
    """The address's quota and what the plan's storage leaves it (the tighter)."""
    async with c.db.connection() as conn:
        limit, used = await directory.address_quota(conn, c.session.address_id)
    if limit is None:
        c.untagged('QUOTA "" ()')
    else:
        c.untagged(f'QUOTA "" (STORAGE {-(-used // 1024)} {-(-limit // 1024)})')


# -- selected ----------------------------------------------------------------------


def _selected(c: Connection) -> Selected:
    c.require(SELECTED)
    assert c.session.selected is not None
    return c.session.selected


async def cmd_close(
    c: Connection, tag: str, toks: Tokens, uid: bool, *, expunge: bool = True
) -> str:
    sel = _selected(c)
    toks.end()
    if expunge and not sel.readonly:
        ids = await _deleted_ids(c, sel, None)
        async with c.db.connection() as conn:
            await store.expunge(conn, c.session.address_id, sel.view.mailbox_id, ids, c.now())
    c.session.selected = None
    c.session.state = AUTHENTICATED
    return f"OK {'CLOSE' if expunge else 'UNSELECT'} completed"


async def cmd_unselect(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    return await cmd_close(c, tag, toks, uid, expunge=False)


async def _deleted_ids(c: Connection, sel: Selected, only: set[int] | None) -> list[str]:
    async with c.db.connection() as conn:
        ids = [
            e
            for u, e in zip(sel.view.uids, sel.view.email_ids, strict=True)
            if only is None or u in only
        ]
        out = []
        for i in range(0, len(ids), 5000):
            rows = await imap_uids.message_rows(
                conn, c.session.address_id, ids[i : i + 5000], columns=False
            )
            out += [e for e, r in rows.items() if "$deleted" in r.keywords]
    return out


async def cmd_expunge(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    sel = _selected(c)
    only: set[int] | None = None
    if uid:
        toks.sp()
        seqs = sequence_set(toks.word())
        only = {sel.view.uids[i] for i in sel.positions(seqs, uid=True)}
    toks.end()
    if sel.readonly:
        return "NO [READ-ONLY] the mailbox is read-only"
    ids = await _deleted_ids(c, sel, only)
    async with c.db.connection() as conn:
        gone = set(
            await store.expunge(conn, c.session.address_id, sel.view.mailbox_id, ids, c.now())
        )
    _announce_expunged(
        c, sel, [u for u, e in zip(sel.view.uids, sel.view.email_ids, strict=True) if e in gone]
    )
    await c.catch_up()
    return "OK EXPUNGE completed"


def _announce_expunged(c: Connection, sel: Selected, uids: list[int]) -> None:
    if not uids:
        return
    if c.session.qresync:
        for u in uids:
            sel.remove(u)
        c.untagged(f"VANISHED {format_uid_set(uids)}")
        return
    # Highest first: each EXPUNGE renumbers the messages after it.
    for u in sorted(uids, reverse=True):
        seq = sel.remove(u)
        if seq is not None:
            c.untagged(f"{seq} EXPUNGE")


async def cmd_fetch(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    sel = _selected(c)
    toks.sp()
    seqs = sequence_set(toks.word())
    toks.sp()
    atts = fetch_atts(toks.item())
    changed_since: int | None = None
    vanished = False
    if toks.maybe_sp():
        mods = toks.item()
        if not isinstance(mods, list):
            raise ParseError("FETCH modifiers are a list")
        i = 0
        while i < len(mods):
            m = text_of(mods[i]).upper()
            if m == "CHANGEDSINCE" and i + 1 < len(mods):
                changed_since = int(text_of(mods[i + 1]))
                c.session.condstore = True
                i += 2
            elif m == "VANISHED" and uid:
                vanished = True
                i += 1
            else:
                raise ParseError(f"unknown FETCH modifier {m}")
    toks.end()
    if vanished and (changed_since is None or not c.session.qresync):
        return "BAD VANISHED needs CHANGEDSINCE and QRESYNC"
    positions = sel.positions(seqs, uid=uid)
    if "MODSEQ" in atts:
        c.session.condstore = True
    if changed_since is not None:
        async with c.db.connection() as conn:
            if vanished:
                gone = await imap_uids.vanished_since(conn, sel.view.mailbox_id, changed_since)
                wanted = {sel.view.uids[p] for p in positions}
                largest = sel.view.uids[-1] if sel.view.uids else 0
                gone = [u for u in gone if seqs.contains(u, largest) and u not in wanted]
                if gone:
                    c.untagged(f"VANISHED (EARLIER) {format_uid_set(gone)}")
            seqmap = await imap_uids.modseqs(
                conn, c.session.address_id, [sel.view.email_ids[p] for p in positions]
            )
        positions = [p for p in positions if seqmap.get(sel.view.email_ids[p], 0) > changed_since]
        if "MODSEQ" not in atts:
            atts.append("MODSEQ")
    await _send_fetch(c, sel, positions, atts, uid=uid)
    if uid:
        await c.catch_up()
    return f"OK {'UID ' if uid else ''}FETCH completed"


def _needs_raw(atts: list[Any]) -> bool:
    """Whether every message's bytes are needed whatever the cache holds."""
    return any(
        isinstance(a, Section) or a in ("BODY", "RFC822", "RFC822.HEADER", "RFC822.TEXT")
        for a in atts
    )


def _header_only(atts: list[Any]) -> bool:
    """Whether the header alone serves the items (ENVELOPE without BODYSTRUCTURE
    or a section)."""
    return "ENVELOPE" in atts and "BODYSTRUCTURE" not in atts and not _needs_raw(atts)


async def _send_fetch(
    c: Connection, sel: Selected, positions: list[int], atts: list[Any], *, uid: bool
) -> None:
    if uid and "UID" not in atts:
        atts = ["UID", *atts]
    if c.session.condstore and "MODSEQ" not in atts and ("FLAGS" in atts):
        atts = [*atts, "MODSEQ"]
    raw_needed = _needs_raw(atts)
    want_envelope = "ENVELOPE" in atts
    want_structure = "BODYSTRUCTURE" in atts
    cached = [k for k, w in (("envelope", want_envelope), ("bodystructure", want_structure)) if w]
    # Without a section, the message is read only for the emails whose ENVELOPE
    # or BODYSTRUCTURE is not cached yet (the store's CASE), and the header alone
    # when only the ENVELOPE is wanted.
    whole_needed = raw_needed or want_structure
    header_needed = _header_only(atts)
    sets_seen = not sel.readonly and any(
        (isinstance(a, Section) and not a.peek and a.name != "BINARY.SIZE")
        or a in ("RFC822", "RFC822.TEXT")
        for a in atts
    )
    details = any(a in ("INTERNALDATE", "RFC822.SIZE", "THREADID") for a in atts)
    address = c.session.address_id
    step = FETCH_BATCH if whole_needed else FETCH_BATCH_SMALL
    batches = [positions[i : i + step] for i in range(0, len(positions), step)]

    # A resync's UID FETCH 1:* (FLAGS): (UID, keywords) pairs, nothing else.
    resync = atts == ["UID", "FLAGS"] and not sets_seen

    async def read(batch: list[int]) -> Rows:
        ids = [sel.view.email_ids[p] for p in batch]
        span = _span(sel, batch)
        async with c.db.connection() as conn:
            if resync and span is not None:
                return {}, {}, await imap_uids.keywords_by_uid(conn, address, *span)
            rows = await imap_uids.message_rows(
                conn,
                address,
                ids,
                with_raw=whole_needed,
                with_header=header_needed,
                columns=False,
                cached=cached,
                only_uncached=not raw_needed,
                details=details,
                uid_range=span,
            )
            seqmap = await imap_uids.modseqs(conn, address, ids) if "MODSEQ" in atts else {}
        return rows, seqmap, None

    # The next batch is read while this one is rendered and sent: PostgreSQL
    # and this process work at once instead of in turn.
    ahead = asyncio.ensure_future(read(batches[0])) if batches else None
    try:
        for n, batch in enumerate(batches):
            assert ahead is not None
            rows, seqmap, by_uid = await ahead
            ahead = asyncio.ensure_future(read(batches[n + 1])) if n + 1 < len(batches) else None
            if by_uid is not None:
                _send_flags(c, sel, batch, by_uid)
                await c.flush()
                continue
            ids = [sel.view.email_ids[p] for p in batch]
            await _send_batch(c, sel, batch, ids, rows, seqmap, atts, sets_seen)
    finally:
        if ahead is not None:
            ahead.cancel()
            with contextlib.suppress(BaseException):
                await ahead


def _send_flags(
    c: Connection, sel: Selected, batch: list[int], by_uid: dict[int, list[str]]
) -> None:
    """A resync's lines, one format each (a message gone meanwhile is left out)."""
    uids, send = sel.view.uids, c.send
    for p in batch:
        keywords = by_uid.get(uids[p])
        if keywords is not None:
            send(b"* %d FETCH (UID %d %s)\r\n" % (p + 1, uids[p], _flags(keywords)))


# One batch as read: rows by email id, MODSEQs, or a resync's keywords by UID.
Rows = tuple[dict[str, imap_uids.MessageRow], dict[str, int], dict[int, list[str]] | None]


async def _send_batch(
    c: Connection,
    sel: Selected,
    batch: list[int],
    ids: list[str],
    rows: dict[str, imap_uids.MessageRow],
    seqmap: dict[str, int],
    atts: list[Any],
    sets_seen: bool,
) -> None:
    address = c.session.address_id
    raw_needed = _needs_raw(atts)
    want_envelope = "ENVELOPE" in atts
    want_structure = "BODYSTRUCTURE" in atts
    header_needed = _header_only(atts)
    if sets_seen:
        unseen = [e for e in ids if e in rows and "$seen" not in rows[e].keywords]
        if unseen:
            async with c.db.connection() as conn:
                after, _ = await store.set_flags(conn, address, unseen, "+", ["$seen"], c.now())
                if "MODSEQ" in atts:
                    seqmap.update(await imap_uids.modseqs(conn, address, unseen))
            for e, kws in after.items():
                rows[e] = rows[e]._replace(keywords=kws)
    rendered: dict[str, tuple[bytes | None, bytes | None]] = {}
    uids = sel.view.uids
    send = c.send
    if atts == ["UID", "FLAGS"] and not sets_seen:
        kept = {uids[p]: rows[e].keywords for p, e in zip(batch, ids, strict=True) if e in rows}
        _send_flags(c, sel, batch, kept)
        await c.flush()
        return
    for p, e in zip(batch, ids, strict=True):
        row = rows.get(e)
        if row is None:
            continue  # expunged meanwhile
        raw = row.raw
        if raw is None and (
            raw_needed
            or (want_envelope and row.envelope is None)
            or (want_structure and row.bodystructure is None)
        ):
            raw = await c.email_ctx.raw.get(row.blob_id)
            if header_needed:
                raw = fetch.split_head(raw)[0]
        parts = _fetch_items(
            row,
            bytes(raw) if raw is not None else b"",
            atts,
            uids[p],
            seqmap.get(e, 1),
            sets_seen,
            rendered,
        )
        send(b"* %d FETCH (" % (p + 1) + b" ".join(parts) + b")\r\n")
    await c.flush()
    # Written while the next batch is read and rendered (and the last while
    # the client reads): the response never waits on the cache.
    await c.cache_written()
    c.cache_later(rendered)


def _flags(keywords: list[str]) -> bytes:
    """FLAGS of a keyword list, rendered once per distinct list (a folder has few)."""
    key = tuple(keywords)
    found = _FLAGS_SEEN.get(key)
    if found is None:
        if len(_FLAGS_SEEN) > 4096:
            _FLAGS_SEEN.clear()
        found = _FLAGS_SEEN[key] = b"FLAGS " + flags_of(keywords).encode()
    return found


_FLAGS_SEEN: dict[tuple[str, ...], bytes] = {}


def _fetch_items(
    row: imap_uids.MessageRow,
    raw: bytes,
    atts: list[Any],
    uid: int,
    modseq: int,
    seen_set: bool,
    rendered: dict[str, tuple[bytes | None, bytes | None]],
) -> list[bytes]:
    """The items of one message's FETCH response. An ENVELOPE or BODYSTRUCTURE
    the cache lacked is rendered and added to ``rendered`` for the store."""
    out: list[bytes] = []
    tree = None  # the message's MIME tree (BODYSTRUCTURE, BODY, a part's section)
    flags_sent = False
    for a in atts:
        if a == "UID":
            out.append(b"UID %d" % uid)
        elif a == "FLAGS":
            out.append(_flags(row.keywords))
            flags_sent = True
        elif a == "INTERNALDATE":
            assert row.received_at is not None  # read with INTERNALDATE (details)
            out.append(b'INTERNALDATE "' + format_date_time(row.received_at).encode() + b'"')
        elif a == "RFC822.SIZE":
            assert row.size is not None
            out.append(b"RFC822.SIZE %d" % row.size)
        elif a == "MODSEQ":
            out.append(b"MODSEQ (%d)" % modseq)
        elif a == "EMAILID":
            out.append(b"EMAILID (" + row.id.encode() + b")")
        elif a == "THREADID":
            assert row.thread_id is not None
            out.append(b"THREADID (" + row.thread_id.encode() + b")")
        elif a == "SAVEDATE":
            out.append(b"SAVEDATE NIL")
        elif a == "ENVELOPE":
            env = row.envelope
            if env is None:
                env = fetch.envelope_of(fetch.split_head(raw)[0])
                _render(rendered, row.id, env, None)
            out.append(b"ENVELOPE " + env)
        elif a == "BODYSTRUCTURE":
            structure = row.bodystructure
            if structure is None:
                tree = tree or mime.walk(raw)
                structure = fetch.bodystructure(raw, tree, extended=True)
                _render(rendered, row.id, None, structure)
            out.append(b"BODYSTRUCTURE " + structure)
        elif a == "BODY":
            tree = tree or mime.walk(raw)
            out.append(b"BODY " + fetch.bodystructure(raw, tree, extended=False))
        elif a == "RFC822":
            out.append(b"RFC822 " + _literal(raw))
        elif a == "RFC822.HEADER":
            out.append(b"RFC822.HEADER " + _literal(fetch.split_head(raw)[0]))
        elif a == "RFC822.TEXT":
            out.append(b"RFC822.TEXT " + _literal(fetch.split_head(raw)[1]))
        elif isinstance(a, Section):
            if a.part and tree is None:
                tree = mime.walk(raw)
            try:
                data = fetch.section_bytes(raw, tree, a)
            except fetch.NoSuchPart:
                data = b""
            if a.name == "BINARY.SIZE":
                out.append(f"BINARY.SIZE[{a.spec}] {len(data)}".encode())
                continue
            data = fetch.partial(data, a)
            label = a.label().encode()
            if a.name == "BINARY" and b"\x00" in data:
                out.append(label + b" ~{%d}\r\n" % len(data) + data)
            else:
                out.append(label + b" " + _literal(data))
    if seen_set and not flags_sent:
        out.append(_flags(row.keywords))
    return out


def _render(
    rendered: dict[str, tuple[bytes | None, bytes | None]],
    email_id: str,
    envelope: bytes | None,
    structure: bytes | None,
) -> None:
    had = rendered.get(email_id, (None, None))
    rendered[email_id] = (envelope or had[0], structure or had[1])


def _literal(data: bytes) -> bytes:
    return b"{%d}\r\n" % len(data) + data


async def cmd_store(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    sel = _selected(c)
    toks.sp()
    seqs = sequence_set(toks.word())
    toks.sp()
    unchanged_since: int | None = None
    item = toks.item()
    if isinstance(item, list):
        if len(item) != 2 or text_of(item[0]).upper() != "UNCHANGEDSINCE":
            raise ParseError("STORE modifiers: (UNCHANGEDSINCE n)")
        unchanged_since = int(text_of(item[1]))
        c.session.condstore = True
        toks.sp()
        item = toks.item()
    if not isinstance(item, Atom):
        raise ParseError("STORE takes FLAGS, +FLAGS or -FLAGS")
    what = item.upper
    silent = what.endswith(".SILENT")
    what = what.removesuffix(".SILENT")
    if what not in ("FLAGS", "+FLAGS", "-FLAGS"):
        raise ParseError("STORE takes FLAGS, +FLAGS or -FLAGS")
    toks.sp()
    rest = toks.items()
    flags = flag_list(rest[0] if len(rest) == 1 else rest)
    if sel.readonly:
        return "NO [READ-ONLY] the mailbox is read-only"
    positions = sel.positions(seqs, uid=uid)
    ids = [sel.view.email_ids[p] for p in positions]
    async with c.db.connection() as conn:
        after, refused = await store.set_flags(
            conn,
            c.session.address_id,
            ids,
            what[0] if what[0] in "+-" else "",
            [keyword_of(f) for f in flags],
            c.now(),
            unchanged_since=unchanged_since,
        )
        seqmap = (
            await imap_uids.modseqs(conn, c.session.address_id, ids) if c.session.condstore else {}
        )
    refused_set = set(refused)
    for p, e in zip(positions, ids, strict=True):
        if e not in after or e in refused_set:
            continue
        quiet = silent and unchanged_since is None
        if not (quiet and c.session.condstore):  # a silent client still learns the MODSEQ
            sel.stored[e] = flags_of(after[e])
        if quiet:
            continue
        items = []
        if uid:
            items.append(f"UID {sel.view.uids[p]}")
        items.append(f"FLAGS {flags_of(after[e])}")
        if c.session.condstore:
            items.append(f"MODSEQ ({seqmap.get(e, 1)})")
        c.untagged(f"{p + 1} FETCH ({' '.join(items)})")
    if refused:
        failed = [
            sel.view.uids[p] if uid else p + 1
            for p, e in zip(positions, ids, strict=True)
            if e in refused_set
        ]
        return f"OK [MODIFIED {format_uid_set(failed)}] conditional STORE failed for some"
    return f"OK {'UID ' if uid else ''}STORE completed"


async def cmd_copy(c: Connection, tag: str, toks: Tokens, uid: bool, *, move: bool = False) -> str:
    sel = _selected(c)
    toks.sp()
    seqs = sequence_set(toks.word())
    toks.sp()
    name = _mailbox_name(c, toks.item())
    toks.end()
    if move and sel.readonly:
        return "NO [READ-ONLY] the mailbox is read-only"
    positions = sel.positions(seqs, uid=uid)
    ids = [sel.view.email_ids[p] for p in positions]
    async with c.db.connection() as conn:
        target = store.find(await store.folders(conn, c.session.address_id), name)
        if target is None:
            return "NO [TRYCREATE] no such mailbox"
        if not ids:
            return f"OK {'MOVE' if move else 'COPY'} completed (nothing)"
        validity, new_uids = await store.copy(
            conn, c.session.address_id, sel.view.mailbox_id, target.id, ids, c.now(), move=move
        )
    pairs = [
        (sel.view.uids[p], new_uids[e])
        for p, e in zip(positions, ids, strict=True)
        if e in new_uids
    ]
    code = ""
    if pairs:
        src = ",".join(str(a) for a, _ in pairs)
        dst = ",".join(str(b) for _, b in pairs)
        code = f"[COPYUID {validity} {src} {dst}] "
    if move:
        if code:
            c.untagged(f"OK {code}moved")
        if target.id != sel.view.mailbox_id:
            _announce_expunged(c, sel, [sel.view.uids[p] for p in positions])
        return "OK MOVE completed"
    return f"OK {code}COPY completed"


async def cmd_move(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    return await cmd_copy(c, tag, toks, uid, move=True)


async def cmd_search(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    sel = _selected(c)
    toks.sp()
    items = toks.items()
    returns: list[str] | None = None
    if items and isinstance(items[0], Atom) and items[0].upper == "RETURN":
        if len(items) < 2 or not isinstance(items[1], list):
            raise ParseError("SEARCH RETURN (options)")
        returns = [text_of(i).upper() for i in items[1]] or ["ALL"]
        items = items[2:]
    if items and isinstance(items[0], Atom) and items[0].upper == "CHARSET":
        if len(items) < 2:
            raise ParseError("CHARSET needs a name")
        if not _known_charset(items[1]):
            return BADCHARSET
        items = items[2:]
    program = search_keys(items)
    matches = await _run_search(c, sel, program)
    if "MODSEQ" in {k for k in _names(program)}:
        c.session.condstore = True
    numbers = [sel.view.uids[p] if uid else p + 1 for p, _ in matches]
    highest = max((m for _, m in matches), default=0)
    if returns is None and not c.session.rev2:
        tail = f" (MODSEQ {highest})" if "MODSEQ" in _names(program) and numbers else ""
        c.untagged("SEARCH" + "".join(f" {n}" for n in numbers) + tail)
        return f"OK {'UID ' if uid else ''}SEARCH completed"
    returns = returns or ["ALL"]
    if "SAVE" in returns:
        sel.saved = [sel.view.uids[p] for p, _ in matches]
        returns = [r for r in returns if r != "SAVE"]
        if not returns:
            return "OK SEARCH completed (saved)"
    parts = esearch(tag, uid, returns, numbers)  # ascending: MIN first, MAX last
    if numbers and "MODSEQ" in _names(program):
        parts.append(f"MODSEQ {highest}")
    c.untagged("ESEARCH " + " ".join(parts))
    return f"OK {'UID ' if uid else ''}SEARCH completed"


def _names(key: Key) -> set[str]:
    out = {key.name}
    for a in key.args:
        if isinstance(a, Key):
            out |= _names(a)
    return out


BADCHARSET = "NO [BADCHARSET (UTF-8 US-ASCII)] unsupported charset"


def _known_charset(item: Any) -> bool:
    return text_of(item).upper() in ("UTF-8", "US-ASCII")


async def _run_search(c: Connection, sel: Selected, program: Key) -> list[tuple[int, int]]:
    """(position, modseq) of the matching messages, ascending."""
    names = _names(program)
    with_raw = bool(names & search.RAW_KEYS)
    largest_uid = sel.view.uids[-1] if sel.view.uids else 0
    match = search.matcher(program, len(sel), largest_uid, c.now())
    out: list[tuple[int, int]] = []
    address = c.session.address_id
    for start in range(0, len(sel), 2000):
        ids = sel.view.email_ids[start : start + 2000]
        async with c.db.connection() as conn:
            rows = await imap_uids.message_rows(conn, address, ids, with_raw=with_raw)
            seqmap = await imap_uids.modseqs(conn, address, ids) if "MODSEQ" in names else {}
        for i, e in enumerate(ids):
            row = rows.get(e)
            if row is None:
                continue
            raw = row.raw
            if with_raw and raw is None:
                raw = await c.email_ctx.raw.get(row.blob_id)
            cand = search.Candidate(
                start + i + 1,
                sel.view.uids[start + i],
                row,
                bytes(raw) if raw is not None else None,
                seqmap.get(e, 0),
            )
            if match(cand):
                out.append((start + i, cand.modseq))
        await asyncio.sleep(0)
    return out


def _span(sel: Selected, batch: Sequence[int]) -> tuple[str, int, int] | None:
    """A run of UIDs (1:*, a client's usual ask) is read as a range, not as an
    id list; rows of the range outside the batch are not used."""
    first, last = sel.view.uids[batch[0]], sel.view.uids[batch[-1]]
    return (sel.view.mailbox_id, first, last) if last - first < 2 * len(batch) else None


async def _sort_positions(c: Connection, sel: Selected, items: list[Any]) -> Sequence[int] | str:
    """The positions a SORT or THREAD names: ``charset search-criteria`` (the
    charset is not optional here, RFC 5256 3), searched as SEARCH searches
    (every message for ALL, with no search run). A NO answer (an unknown
    charset) instead, as a string."""
    if not items:
        raise ParseError("a charset and search criteria are needed")
    if not _known_charset(items[0]):
        return BADCHARSET
    program = search_keys(items[1:])
    if program.name == "ALL":
        return range(len(sel))
    return [p for p, _ in await _run_search(c, sel, program)]


async def _sort_input(
    c: Connection, items: list[Any], *, threading: bool = False
) -> list[sort.Message] | str:
    """The messages a SORT or THREAD names, with their keys."""
    sel = _selected(c)
    positions = await _sort_positions(c, sel, items)
    if isinstance(positions, str):
        return positions
    out: list[sort.Message] = []
    address = c.session.address_id
    for start in range(0, len(positions), SORT_BATCH):
        batch = positions[start : start + SORT_BATCH]
        async with c.db.connection() as conn:
            rows = await imap_uids.sort_keys(
                conn,
                address,
                [sel.view.email_ids[p] for p in batch],
                threading=threading,
                uid_range=_span(sel, batch),
            )
        for p in batch:
            row = rows.get(sel.view.email_ids[p])
            if row is not None:
                out.append(sort.Message.of(p + 1, sel.view.uids[p], row))
        await asyncio.sleep(0)
    return out


ESORT_RETURNS = frozenset({"MIN", "MAX", "ALL", "COUNT"})


async def cmd_sort(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    """SORT (RFC 5256 3): ``SORT (REVERSE DATE) UTF-8 ALL``; with ESORT (RFC 5267)
    ``SORT RETURN (MIN MAX COUNT ALL) (DATE) UTF-8 ALL`` answers one ESEARCH."""
    _selected(c)
    toks.sp()
    items = toks.items()
    returns: list[str] | None = None
    if items and isinstance(items[0], Atom) and items[0].upper == "RETURN":
        if len(items) < 2 or not isinstance(items[1], list):
            raise ParseError("SORT RETURN (options)")
        returns = [text_of(i).upper() for i in items[1]] or ["ALL"]
        unknown = [r for r in returns if r not in ESORT_RETURNS]
        if unknown:
            raise ParseError(f"unknown SORT RETURN option {unknown[0]}")
        items = items[2:]
    if not items:
        raise ParseError("SORT needs sort criteria")
    by = sort.criteria(items[0])
    if all(k.key in imap_uids.SQL_ORDER for k in by):
        found: list[int] | str = await _sorted_in_sql(c, items[1:], by, uid=uid)
    else:
        messages = await _sort_input(c, items[1:])
        if isinstance(messages, str):
            return messages
        found = [m.uid if uid else m.seq for m in sort.ordered(messages, by)]
    if isinstance(found, str):
        return found
    if returns is None:
        c.untagged("SORT" + "".join(f" {n}" for n in found))
    else:
        c.untagged("ESEARCH " + " ".join(esearch(tag, uid, returns, found)))
    return f"OK {'UID ' if uid else ''}SORT completed"


def esearch(tag: str, uid: bool, returns: list[str], found: list[int]) -> list[str]:
    """An ESEARCH answer's parts (RFC 4731; for SORT, RFC 5267 3.2): MIN and MAX are
    the first and the last of ``found`` in its order (SEARCH's is ascending, SORT's
    the sort order), and ALL lists them in that order."""
    parts = [f'(TAG "{tag}")'] + (["UID"] if uid else [])
    if found:
        if "MIN" in returns:
            parts.append(f"MIN {found[0]}")
        if "MAX" in returns:
            parts.append(f"MAX {found[-1]}")
        if "ALL" in returns:
            parts.append(f"ALL {format_ordered_set(found)}")
    if "COUNT" in returns:
        parts.append(f"COUNT {len(found)}")
    return parts


async def _sorted_in_sql(
    c: Connection, items: list[Any], by: list[sort.Criterion], *, uid: bool
) -> list[int] | str:
    """SORT by dates and sizes only: PostgreSQL orders the mailbox's UIDs
    (ties by UID, which is sequence order, as sort.ordered breaks them), and
    only the ones the search kept and the session knows are answered."""
    sel = _selected(c)
    positions = await _sort_positions(c, sel, items)
    if isinstance(positions, str) or not positions:
        return positions if isinstance(positions, str) else []
    wanted = None if isinstance(positions, range) else set(positions)
    async with c.db.connection() as conn:
        ordered = await imap_uids.uids_in_order(
            conn,
            c.session.address_id,
            (sel.view.mailbox_id, sel.view.uids[0], sel.view.uids[-1]),
            [(k.key, k.reverse) for k in by],
        )
    out = []
    for u in ordered:
        seq = sel.seq_of(u)  # None: expunged, or not announced to this session yet
        if seq is not None and (wanted is None or seq - 1 in wanted):
            out.append(u if uid else seq)
    return out


async def cmd_thread(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    """THREAD (RFC 5256 4): ``THREAD REFERENCES UTF-8 ALL``."""
    _selected(c)
    toks.sp()
    items = toks.items()
    algorithm = text_of(items[0]).upper() if items and isinstance(items[0], Atom) else ""
    if algorithm not in thread.ALGORITHMS:
        raise ParseError("THREAD ORDEREDSUBJECT or THREAD REFERENCES")
    found = await _sort_input(c, items[1:], threading=algorithm == "REFERENCES")
    if isinstance(found, str):
        return found
    roots = thread.ALGORITHMS[algorithm](found)
    listed = thread.thread_list(roots, (lambda m: m.uid) if uid else (lambda m: m.seq))
    c.untagged("THREAD" + (f" {listed}" if listed else ""))
    return f"OK {'UID ' if uid else ''}THREAD completed"


async def cmd_uid(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    toks.sp()
    name = toks.word().upper()
    handler = UID_COMMANDS.get(name)
    if handler is None:
        raise ParseError(f"UID {name} is not a command")
    return await handler(c, tag, toks, True)


async def cmd_idle(c: Connection, tag: str, toks: Tokens, uid: bool) -> str:
    c.require(AUTHENTICATED, SELECTED)
    toks.end()
    return await c.idle()


COMMANDS: dict[str, Handler] = {
    "CAPABILITY": cmd_capability,
    "NOOP": cmd_noop,
    "CHECK": cmd_check,
    "LOGOUT": cmd_logout,
    "ID": cmd_id,
    "ENABLE": cmd_enable,
    "STARTTLS": cmd_starttls,
    "LOGIN": cmd_login,
    "AUTHENTICATE": cmd_authenticate,
    "SELECT": cmd_select,
    "EXAMINE": cmd_examine,
    "CREATE": cmd_create,
    "DELETE": cmd_delete,
    "RENAME": cmd_rename,
    "SUBSCRIBE": cmd_subscribe,
    "UNSUBSCRIBE": cmd_unsubscribe,
    "LIST": cmd_list,
    "LSUB": cmd_lsub,
    "NAMESPACE": cmd_namespace,
    "STATUS": cmd_status,
    "APPEND": cmd_append,
    "GETQUOTA": cmd_getquota,
    "GETQUOTAROOT": cmd_getquotaroot,
    "CLOSE": cmd_close,
    "UNSELECT": cmd_unselect,
    "COMPRESS": cmd_compress,
    "EXPUNGE": cmd_expunge,
    "FETCH": cmd_fetch,
    "STORE": cmd_store,
    "COPY": cmd_copy,
    "MOVE": cmd_move,
    "SEARCH": cmd_search,
    "SORT": cmd_sort,
    "THREAD": cmd_thread,
    "UID": cmd_uid,
    "IDLE": cmd_idle,
}
UID_COMMANDS: dict[str, Handler] = {
    "FETCH": cmd_fetch,
    "STORE": cmd_store,
    "COPY": cmd_copy,
    "MOVE": cmd_move,
    "SEARCH": cmd_search,
    "SORT": cmd_sort,
    "THREAD": cmd_thread,
    "EXPUNGE": cmd_expunge,
}
# Commands whose untagged EXPUNGE would break a client's numbering (RFC 9051 7.5.1).
NO_EXPUNGE_AFTER = {"FETCH", "STORE", "SEARCH", "SORT", "THREAD"}

__all__ = ["COMMANDS", "capabilities", "nstring", "plist", "string"]
