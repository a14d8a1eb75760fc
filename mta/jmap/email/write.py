"""Email/set (RFC 8621 4.6), Email/copy (4.7) and Email/import (4.8).

Each call is one transaction on the caller's connection: every row change,
the mailbox counts (the store's triggers), the quota usage and the change log
commit together, so a state string never names half a call. Threads stay
right: a new email joins its thread by message ids (mta/store/emails.py); a
destroyed one leaves it, and a thread left empty is destroyed with its ids.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from common.blobs import blob_id_of
from common.db import Conn, transaction
from mta.jmap.email import compose
from mta.jmap.email.blobs import read_blob
from mta.jmap.email.context import EmailContext, is_id
from mta.jmap.email.errors import MethodError, SetResponse, set_error
from mta.jmap.email.query import keyword
from mta.message import parse_message
from mta.store import changes, emails, mailboxes

IMMUTABLE = {
    "id", "blobId", "threadId", "size", "receivedAt", "messageId", "inReplyTo", "references",
    "sender", "from", "to", "cc", "bcc", "replyTo", "subject", "sentAt", "hasAttachment",
    "preview", "headers", "bodyStructure", "bodyValues", "textBody", "htmlBody", "attachments",
}  # fmt: skip


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _resolve(value: str, created_ids: Mapping[str, str]) -> str:
    """A "#creationId" reference to an object created earlier in the request."""
    if value.startswith("#"):
        return created_ids.get(value[1:], value)
    return value


def _id_map(value: Any, prop: str, created_ids: Mapping[str, str], *, keys: str) -> dict[str, bool]:
    if not isinstance(value, Mapping) or not all(v is True for v in value.values()):
        raise compose.Invalid(f"{prop} is a map of {keys} to true", [prop])
    return {_resolve(str(k), created_ids): True for k in value}


def apply_patch(
    keywords: set[str],
    mailboxes: set[str],
    patch: Mapping[str, Any],
    created_ids: Mapping[str, str],
) -> tuple[set[str], set[str]]:
    """The keywords and mailboxes after a PatchObject, or compose.Invalid."""
    kw, mb = set(keywords), set(mailboxes)
    whole = [p for p in patch if "/" not in p]
    for prop in whole:
        if prop == "keywords":
            kw = {keyword(k) for k in _id_map(patch[prop], prop, {}, keys="keywords")}
        elif prop == "mailboxIds":
            mb = set(_id_map(patch[prop], prop, created_ids, keys="mailbox ids"))
        else:
            raise compose.Invalid(f"{prop} cannot be changed", [prop])
    for path, value in patch.items():
        if "/" not in path:
            continue
        head, _, rest = path.partition("/")
        if head in whole:
            raise compose.Invalid(f"{path} patches {head}, set whole too", [path])
        if "/" in rest or value not in (True, None):
            raise compose.Invalid(f"bad patch {path}", [path])
        if head == "keywords":
            try:
                name = keyword(_unescape(rest))
            except MethodError as exc:
                raise compose.Invalid(str(exc), [path]) from exc
            (kw.add if value else kw.discard)(name)
        elif head == "mailboxIds":
            name = _resolve(_unescape(rest), created_ids)
            (mb.add if value else mb.discard)(name)
        else:
            raise compose.Invalid(f"{path} cannot be changed", [path])
    return kw, mb


async def _check_state(conn: Conn, account_id: str, args: Mapping[str, Any]) -> str:
    state = await changes.state(conn, account_id, "Email")
    wanted = args.get("ifInState")
    if wanted is not None and wanted != state:
        raise MethodError("stateMismatch")
    return state


def _map_arg(args: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = args.get(name) or {}
    if not isinstance(value, Mapping):
        raise MethodError("invalidArguments", f"{name} is a map")
    return value


def _received_at(value: Any, now: datetime) -> datetime:
    if value is None:
        return now
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError as exc:
        raise compose.Invalid("receivedAt is a UTCDate", ["receivedAt"]) from exc
    if parsed.tzinfo is None:
        raise compose.Invalid("receivedAt is a UTCDate", ["receivedAt"])
    return parsed


async def _store_raw(ctx: EmailContext, conn: Conn, data: bytes, now: datetime) -> str:
    """Keep the raw MIME (in this transaction when small, mta/store/raw.py)."""
    if ctx.raw.inline(len(data)):
        return await ctx.raw.put_inline(conn, data, now)
    return await ctx.raw.put(data)


async def _insert(
    ctx: EmailContext,
    conn: Conn,
    account_id: str,
    data: bytes,
    mailbox_ids: Sequence[str],
    keywords: Sequence[str],
    received_at: datetime,
    now: datetime,
) -> dict[str, Any]:
    # Imported here: the mail package imports this module back (through
    # mta.mailstore), so a fresh `import mta.jmap.email` must not start with it.
    from mail import directory

    quota, used = await directory.address_quota(conn, account_id)
    if quota is not None and used + len(data) > quota:
        raise compose.Invalid("the mailbox is over its quota", [], type="overQuota")
    blob_id = await _store_raw(ctx, conn, data, now)
    assert blob_id == blob_id_of(data)
    email_id = await emails.insert(
        conn,
        emails.NewEmail(
            address_id=account_id,
            blob_id=blob_id,
            size=len(data),
            received_at=received_at,
            parsed=parse_message(data),
            mailbox_ids=list(mailbox_ids),
            keywords=list(keywords),
        ),
        now,
    )
    thread_id = await emails.thread_of(conn, email_id)
    return {"id": email_id, "blobId": blob_id, "threadId": thread_id, "size": len(data)}


async def store_message(
    ctx: EmailContext,
    conn: Conn,
    account_id: str,
    data: bytes,
    mailbox_ids: Sequence[str],
    keywords: Sequence[str],
    received_at: datetime,
    now: datetime,
) -> dict[str, Any]:
    """One raw message stored as an email in the caller's transaction, under the
    address's quota and the plan's storage (compose.Invalid "overQuota" past
    them): IMAP's APPEND stores the way Email/import does."""
    return await _insert(ctx, conn, account_id, data, mailbox_ids, keywords, received_at, now)


def _invalid(exc: compose.Invalid) -> dict[str, Any]:
    """The SetError of a create the server refused (invalidProperties, overQuota, ...)."""
    if exc.type == "invalidProperties":
        return set_error(exc.type, str(exc), properties=exc.properties)
    return set_error(exc.type, str(exc))


def _check_mailboxes(
    mb: set[str], owned: set[str], prop: str = "mailboxIds", *, limit: int = 0
) -> None:
    if limit and len(mb) > limit:
        raise compose.Invalid(f"at most {limit} mailboxes", [prop], type="tooManyMailboxes")
    if not mb:
        raise compose.Invalid("an email is in at least one mailbox", [prop])
    unknown = mb - owned
    if unknown:
        raise compose.Invalid(f"no such mailbox: {', '.join(sorted(unknown))}", [prop])


async def set_emails(
    ctx: EmailContext,
    conn: Conn,
    account_id: str,
    args: Mapping[str, Any],
    *,
    created_ids: dict[str, str] | None = None,
    hostname: str = "localhost",
) -> dict[str, Any]:
    created_ids = created_ids if created_ids is not None else {}
    create = _map_arg(args, "create")
    update = _map_arg(args, "update")
    destroy = args.get("destroy") or []
    if not isinstance(destroy, list):
        raise MethodError("invalidArguments", "destroy is a list of ids")
    if len(create) + len(update) + len(destroy) > ctx.max_objects_in_set:
        raise MethodError("requestTooLarge", f"at most {ctx.max_objects_in_set} objects")
    now = ctx.clock.now()
    out = SetResponse(account_id)
    async with transaction(conn):
        out.old_state = await _check_state(conn, account_id, args)
        owned = await mailboxes.ids(conn, account_id)
        for cid, spec in create.items():
            try:
                out.created[cid] = await _create_one(
                    ctx, conn, account_id, spec, owned, created_ids, now, hostname
                )
                created_ids[cid] = out.created[cid]["id"]
            except compose.Invalid as exc:
                out.not_created[cid] = _invalid(exc)
            except compose.BlobMissing as exc:
                out.not_created[cid] = set_error("blobNotFound", notFound=[exc.blob_id])
        await _update(
            conn,
            account_id,
            update,
            owned,
            created_ids,
            now,
            out.updated,
            out.not_updated,
            ctx.max_mailboxes_per_email,
        )
        ids = [_resolve(str(i), created_ids) for i in destroy]
        # Ids that cannot name an email are simply not destroyed.
        valid = [i for i in ids if is_id(i)]
        out.destroyed = await emails.destroy_emails(conn, account_id, valid, now)
        for i in ids:
            if i not in out.destroyed:
                out.not_destroyed[i] = set_error("notFound")
        out.new_state = await changes.state(conn, account_id, "Email")
    return out.arguments()


async def _create_one(
    ctx: EmailContext,
    conn: Conn,
    account_id: str,
    spec: Any,
    owned: set[str],
    created_ids: Mapping[str, str],
    now: datetime,
    hostname: str,
) -> dict[str, Any]:
    if not isinstance(spec, Mapping):
        raise compose.Invalid("an Email object")
    bad = [p for p in spec if p in compose.SERVER_SET]
    if bad:
        raise compose.Invalid("set by the server", bad)
    mb = set(_id_map(spec.get("mailboxIds"), "mailboxIds", created_ids, keys="mailbox ids"))
    _check_mailboxes(mb, owned, limit=ctx.max_mailboxes_per_email)
    try:
        kws = {
            keyword(k) for k in _id_map(spec.get("keywords") or {}, "keywords", {}, keys="keywords")
        }
    except MethodError as exc:
        raise compose.Invalid(str(exc), ["keywords"]) from exc
    received = _received_at(spec.get("receivedAt"), now)

    async def blob(blob_id: str) -> bytes | None:
        return await read_blob(ctx, conn, account_id, blob_id)

    data = await compose.build(spec, blob, now=now, hostname=hostname)
    if len(data) > ctx.max_size_upload:
        raise compose.Invalid("the message is too large", ["bodyStructure"], type="tooLarge")
    return await _insert(ctx, conn, account_id, data, sorted(mb), sorted(kws), received, now)


async def _update(
    conn: Conn,
    account_id: str,
    update: Mapping[str, Any],
    owned: set[str],
    created_ids: Mapping[str, str],
    now: datetime,
    updated: dict[str, Any],
    not_updated: dict[str, Any],
    limit: int,
) -> None:
    if not update:
        return
    ids = {_resolve(str(k), created_ids): k for k in update}
    rows = await emails.lock_flags(conn, account_id, [i for i in ids if is_id(i)])
    current = {r.id: r for r in rows}
    changed_emails: list[str] = []
    touched_boxes: set[str] = set()
    for email_id, key in ids.items():
        row = current.get(email_id)
        if row is None:
            not_updated[key] = set_error("notFound")
            continue
        patch = update[key]
        if not isinstance(patch, Mapping):
            not_updated[key] = set_error("invalidPatch")
            continue
        old_kw, old_mb = set(row.keywords), set(row.mailbox_ids)
        try:
            kw, mb = apply_patch(old_kw, old_mb, patch, created_ids)
            _check_mailboxes(mb, owned, limit=limit)
        except compose.Invalid as exc:
            not_updated[key] = set_error(exc.type, str(exc), properties=exc.properties)
            continue
        updated[key] = None
        if kw == old_kw and mb == old_mb:
            continue
        if kw != old_kw:
            await emails.set_keywords(conn, email_id, sorted(kw))
            if ("$seen" in kw) != ("$seen" in old_kw):
                touched_boxes |= old_mb  # their unread counts moved
        if mb != old_mb:
            removed, added = sorted(old_mb - mb), sorted(mb - old_mb)
            if removed:
                await emails.leave_mailboxes(conn, email_id, removed)
            if added:
                await emails.join_mailboxes(conn, email_id, added)
            touched_boxes |= set(removed) | set(added)
        changed_emails.append(email_id)
    await changes.record(conn, account_id, "Email", changed_emails, "updated", now)
    await changes.record(conn, account_id, "Mailbox", sorted(touched_boxes), "updated", now)


async def copy_emails(
    ctx: EmailContext,
    conn: Conn,
    from_account_id: str,
    account_id: str,
    args: Mapping[str, Any],
    *,
    created_ids: dict[str, str] | None = None,
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Email/copy between two accounts the caller may use (the dispatcher checks).

    Returns the Email/copy response and, with onSuccessDestroyOriginal, the
    implicit Email/set response for the source account (RFC 8620 5.4).
    """
    created_ids = created_ids if created_ids is not None else {}
    if from_account_id == account_id:
        raise MethodError("invalidArguments", "fromAccountId and accountId must differ")
    create = _map_arg(args, "create")
    if len(create) > ctx.max_objects_in_set:
        raise MethodError("requestTooLarge", f"at most {ctx.max_objects_in_set} objects")
    now = ctx.clock.now()
    created: dict[str, Any] = {}
    not_created: dict[str, Any] = {}
    async with transaction(conn):
        from_state = await changes.state(conn, from_account_id, "Email")
        if args.get("ifFromInState") is not None and args["ifFromInState"] != from_state:
            raise MethodError("stateMismatch")
        old_state = await _check_state(conn, account_id, args)
        owned = await mailboxes.ids(conn, account_id)
        wanted = [
            str(s["id"]) for s in create.values() if isinstance(s, Mapping) and is_id(s.get("id"))
        ]
        sources: dict[Any, emails.Source] = {
            r.id: r for r in await emails.sources(conn, from_account_id, wanted)
        }
        for cid, spec in create.items():
            if not isinstance(spec, Mapping):
                not_created[cid] = set_error("invalidProperties", "an Email object")
                continue
            source = sources.get(spec.get("id"))
            if source is None:
                not_created[cid] = set_error("notFound", properties=["id"])
                continue
            try:
                mb = set(
                    _id_map(spec.get("mailboxIds"), "mailboxIds", created_ids, keys="mailbox ids")
                )
                _check_mailboxes(mb, owned, limit=ctx.max_mailboxes_per_email)
                kws = (
                    {keyword(k) for k in _id_map(spec["keywords"], "keywords", {}, keys="keywords")}
                    if spec.get("keywords") is not None
                    else set(source.keywords)
                )
                received = _received_at(spec.get("receivedAt"), source.received_at)
            except (compose.Invalid, MethodError) as exc:
                props = getattr(exc, "properties", [])
                kind = getattr(exc, "type", "invalidProperties")
                kind = kind if isinstance(exc, compose.Invalid) else "invalidProperties"
                not_created[cid] = set_error(kind, str(exc), properties=props)
                continue
            data = await ctx.raw.get(source.blob_id)
            try:
                created[cid] = await _insert(
                    ctx, conn, account_id, data, sorted(mb), sorted(kws), received, now
                )
            except compose.Invalid as exc:
                not_created[cid] = _invalid(exc)
                continue
            created_ids[cid] = created[cid]["id"]
        new_state = await changes.state(conn, account_id, "Email")
    response = {
        "fromAccountId": from_account_id,
        "accountId": account_id,
        "oldState": old_state,
        "newState": new_state,
        "created": created or None,
        "notCreated": not_created or None,
    }
    implicit = None
    if args.get("onSuccessDestroyOriginal") and created:
        implicit = await set_emails(
            ctx,
            conn,
            from_account_id,
            {
                "destroy": [create[cid]["id"] for cid in created],
                "ifInState": args.get("destroyFromIfInState"),
            },
        )
    return response, implicit


async def import_emails(
    ctx: EmailContext,
    conn: Conn,
    account_id: str,
    args: Mapping[str, Any],
    *,
    created_ids: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Email/import: uploaded message blobs stored as emails."""
    created_ids = created_ids if created_ids is not None else {}
    specs = _map_arg(args, "emails")
    if len(specs) > ctx.max_objects_in_set:
        raise MethodError("requestTooLarge", f"at most {ctx.max_objects_in_set} objects")
    now = ctx.clock.now()
    created: dict[str, Any] = {}
    not_created: dict[str, Any] = {}
    async with transaction(conn):
        old_state = await _check_state(conn, account_id, args)
        owned = await mailboxes.ids(conn, account_id)
        for cid, spec in specs.items():
            try:
                if not isinstance(spec, Mapping) or not isinstance(spec.get("blobId"), str):
                    raise compose.Invalid("an EmailImport object with a blobId", ["blobId"])
                mb = set(
                    _id_map(spec.get("mailboxIds"), "mailboxIds", created_ids, keys="mailbox ids")
                )
                _check_mailboxes(mb, owned, limit=ctx.max_mailboxes_per_email)
                kws = {
                    keyword(k)
                    for k in _id_map(spec.get("keywords") or {}, "keywords", {}, keys="keywords")
                }
                received = _received_at(spec.get("receivedAt"), now)
            except (compose.Invalid, MethodError) as exc:
                props = getattr(exc, "properties", [])
                kind = getattr(exc, "type", "invalidProperties")
                kind = kind if isinstance(exc, compose.Invalid) else "invalidProperties"
                not_created[cid] = set_error(kind, str(exc), properties=props)
                continue
            blob_id = _resolve(spec["blobId"], created_ids)
            data = await read_blob(ctx, conn, account_id, blob_id)
            if data is None:
                # RFC 8621 4.8: a blobId not found is invalidProperties (blobNotFound
                # is Email/set's, for parts), as the jmap-test-suite expects too.
                not_created[cid] = set_error(
                    "invalidProperties", f"no blob {blob_id}", properties=["blobId"]
                )
                continue
            if not _looks_like_message(data):
                not_created[cid] = set_error("invalidEmail", "the blob is not an RFC 5322 message")
                continue
            try:
                created[cid] = await _insert(
                    ctx, conn, account_id, data, sorted(mb), sorted(kws), received, now
                )
            except compose.Invalid as exc:
                not_created[cid] = _invalid(exc)
                continue
            created_ids[cid] = created[cid]["id"]
        new_state = await changes.state(conn, account_id, "Email")
    return {
        "accountId": account_id,
        "oldState": old_state,
        "newState": new_state,
        "created": created or None,
        "notCreated": not_created or None,
    }


def _looks_like_message(data: bytes) -> bool:
    """A header block first: at least one "Name:" field before any blank line."""
    head = data[:65536].split(b"\r\n\r\n", 1)[0].split(b"\n\n", 1)[0]
    first = head.split(b"\n", 1)[0]
    name, colon, _ = first.partition(b":")
    return bool(colon) and bool(name) and all(33 <= c <= 126 for c in name)
