"""The Email methods in the JMAP registry: one line each over the plain functions."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from common.db import Conn
from mta.jmap import blobs as jmap_blobs
from mta.jmap import methods as generic
from mta.jmap.context import JmapContext
from mta.jmap.email import get, query, snippet, write
from mta.jmap.email.blobs import read_part
from mta.jmap.email.context import EmailContext
from mta.jmap.registry import Account, Blob, MethodCall, register, register_blob_resolver

Fn = Callable[..., Awaitable[dict[str, Any]]]


def email_context(ctx: JmapContext, account: Account) -> EmailContext:
    async def uploads(_address_id: str, blob_id: str) -> bytes | None:
        # Uploads (and whole messages) as the core resolves them for this account.
        return await jmap_blobs.read_blob(ctx, account, blob_id)

    limits = ctx.limits
    return EmailContext(
        raw=ctx.blobs,
        clock=ctx.runtime.clock,
        uploads=uploads,
        max_objects_in_get=limits.max_objects_in_get,
        max_objects_in_set=limits.max_objects_in_set,
        max_size_upload=limits.max_size_attachments_per_email,
        max_mailboxes_per_email=limits.max_mailboxes_per_email,
    )


def _arguments(call: MethodCall, *id_lists: str) -> dict[str, Any]:
    """The arguments with "#creationId" references in id lists resolved."""
    args = dict(call.arguments)
    for name in id_lists:
        if isinstance(args.get(name), list):
            args[name] = [call.resolve_id(i) if isinstance(i, str) else i for i in args[name]]
    return args


def served(fn: Fn, *id_lists: str, **kw: Any) -> Callable[[MethodCall], Awaitable[dict[str, Any]]]:
    async def handler(call: MethodCall) -> dict[str, Any]:
        account = call.account
        args = _arguments(call, *id_lists)
        extra: dict[str, Any] = (
            {"created_ids": call.request.created_ids} if kw.get("creates") else {}
        )
        if kw.get("hostname"):
            extra["hostname"] = call.ctx.mta.config.smtp_hostname
        conn: Conn
        async with call.connection() as conn:
            return await fn(
                email_context(call.ctx, account), conn, account.address_id, args, **extra
            )

    return handler


async def email_changes(call: MethodCall) -> dict[str, Any]:
    return await generic.changes(call, "Email")


async def email_copy(call: MethodCall) -> dict[str, Any]:
    source, target = call.account_for("fromAccountId"), call.account
    async with call.connection() as conn:
        response, implicit = await write.copy_emails(
            email_context(call.ctx, target),
            conn,
            source.address_id,
            target.address_id,
            call.arguments,
            created_ids=call.request.created_ids,
        )
    if implicit is not None:
        call.respond("Email/set", implicit)
    return response


@register_blob_resolver
async def part_blob(ctx: JmapContext, account: Account, blob_id: str) -> Blob | None:
    """A body part's blobId ("<message sha256>.<partId>") for download and Blob/copy."""
    async with ctx.runtime.db.connection() as conn:
        found = await read_part(email_context(ctx, account), conn, account.address_id, blob_id)
    if found is None:
        return None
    data, media_type = found

    async def chunks() -> Any:
        yield data

    return Blob(blob_id=blob_id, size=len(data), type=media_type, chunks=chunks)


register("Email/get", served(get.get, "ids"))
register("Email/changes", email_changes)
register("Email/query", served(query.query))
register("Email/queryChanges", served(query.query_changes))
register("Email/set", served(write.set_emails, "destroy", creates=True, hostname=True))
register("Email/copy", email_copy)
register("Email/import", served(write.import_emails, creates=True))
register("Email/parse", served(get.parse, "blobIds"))
register("SearchSnippet/get", served(snippet.get_snippets, "emailIds"))
