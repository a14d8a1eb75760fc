"""EmailSubmission/get, /changes, /query, /queryChanges, /set (RFC 8621 7).

A submission queues the Email's raw MIME (its Bcc header removed, RFC 8621
7.5) in the outbound queue (mta/store/outbound.py, source 'jmap') in the
same transaction that records it; the queue worker signs it with the
domain's DKIM key and delivers it like all mail. The submission's id is the
outbound message's id, so ``undoStatus`` and ``deliveryStatus`` are read from
the queue's message and per-recipient rows, never copied (a trigger in
migration 0050 moves the EmailSubmission state when the worker changes them).

An address sends only as itself: the identity, the envelope's ``mailFrom``
and the message's From must all be the account's address (``forbiddenFrom``
/ ``forbiddenMailFrom`` otherwise), as Identity/set allows no other.
Delayed send is the FUTURERELEASE extension (RFC 4865): ``HOLDFOR`` or
``HOLDUNTIL`` on ``mailFrom`` schedules the queue's message, and while it is
scheduled the submission is ``pending`` and may be canceled.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import asdict
from datetime import datetime, timedelta
from email.utils import getaddresses
from typing import Any

from common.db import Conn
from common.recipients import AddressRefused, check_recipient
from mta.jmap import methods
from mta.jmap.email import write
from mta.jmap.email.methods import email_context
from mta.jmap.mailbox import Invalid, _savepoint
from mta.jmap.registry import SUBMISSION, Account, MethodCall, SetResponse, register, set_error
from mta.message import header_values, read_message, split_head
from mta.outbound.submit import (
    SendRefused,
    Sends,
    Submission,
    submit,
)
from mta.store import emails, identities, outbound, submissions

TYPE = "EmailSubmission"
MAX_RECIPIENTS = 100
PROPERTIES = (
    "id",
    "identityId",
    "emailId",
    "threadId",
    "envelope",
    "sendAt",
    "undoStatus",
    "deliveryStatus",
    "dsnBlobIds",
    "mdnBlobIds",
)
_BCC = re.compile(rb"^bcc:.*(?:\r?\n[ \t].*)*\r?\n", re.IGNORECASE | re.MULTILINE)
# The queue's per-recipient status as RFC 8621 7's deliveryStatus.delivered.
DELIVERED = {
    "queued": "queued",
    "deferred": "queued",
    "delivered": "yes",
    "bounced": "no",
    "failed": "no",
    "suppressed": "no",
    "canceled": "no",
}


def _utc(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def undo_status(message_status: str | None) -> str:
    if message_status == "scheduled":
        return "pending"
    if message_status == "canceled":
        return "canceled"
    return "final"


async def _rows(conn: Conn, address_id: str, ids: list[str] | None) -> list[dict[str, Any]]:
    return [asdict(r) for r in await submissions.rows(conn, address_id, ids)]


async def _delivery(conn: Conn, ids: list[str]) -> dict[str, dict[str, Any]]:
    """deliveryStatus of each submission, one query for all of them."""
    out: dict[str, dict[str, Any]] = {}
    for r in await submissions.recipients(conn, ids):
        reply = r.last_reply or ("250 2.0.0 queued" if r.status == "queued" else "")
        out.setdefault(r.id, {})[r.rcpt] = {
            "smtpReply": reply,
            "delivered": DELIVERED.get(r.status, "unknown"),
            "displayed": "unknown",
        }
    return out


def render(
    row: dict[str, Any], delivery: dict[str, Any] | None, props: list[str]
) -> dict[str, Any]:
    full = {
        "id": row["id"],
        "identityId": row["identity_id"],
        "emailId": row["email_id"],
        "threadId": row["thread_id"],
        "envelope": row["envelope"],
        "sendAt": _utc(row["send_at"]),
        "undoStatus": undo_status(row["message_status"]),
        "deliveryStatus": delivery,
        "dsnBlobIds": [],
        "mdnBlobIds": [],
    }
    return {p: full[p] for p in props}


async def submission_get(call: MethodCall) -> dict[str, Any]:
    account = call.account
    ids = methods.get_ids(call)
    props = methods.properties(call, PROPERTIES)
    async with call.connection() as conn:
        state = await methods.state(conn, account.address_id, TYPE)
        valid = None if ids is None else [i for i in ids if methods.is_uuid(i)]
        rows = await _rows(conn, account.address_id, valid)
        delivery = await _delivery(conn, [r["id"] for r in rows]) if rows else {}
    return {
        "accountId": account.id,
        "state": state,
        **methods.get_list(rows, ids, lambda row: render(row, delivery.get(row["id"]), props)),
    }


async def submission_changes(call: MethodCall) -> dict[str, Any]:
    return await methods.changes(call, TYPE)


def _query(call: MethodCall) -> submissions.Filter:
    """The filter and sort of a query (RFC 8621 7.3), checked."""
    args = call.arguments
    query = submissions.Filter()
    flt = args.get("filter") or {}
    if not isinstance(flt, dict):
        call.fail("invalidArguments", "filter must be an object")
    for key, value in flt.items():
        if key in ("identityIds", "emailIds", "threadIds"):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                call.fail("invalidArguments", f"{key} must be a list of ids")
            ids = [call.resolve_id(v) for v in value]
            if key == "identityIds":
                query.identity_ids = ids
            elif key == "emailIds":
                query.email_ids = ids
            else:
                query.thread_ids = ids
        elif key == "undoStatus":
            if value not in ("pending", "final", "canceled"):
                call.fail("invalidArguments", "undoStatus is pending, final or canceled")
            query.undo_status = value
        elif key in ("before", "after"):
            try:
                moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
            except ValueError:
                call.fail("invalidArguments", f"{key} must be a UTCDate")
            if key == "before":
                query.before = moment
            else:
                query.after = moment
        else:
            call.fail("unsupportedFilter", f"unknown filter condition {key}")
    sort = args.get("sort") or [{"property": "sentAt", "isAscending": False}]
    if not isinstance(sort, list):
        call.fail("invalidArguments", "sort must be a list")
    for comparator in sort:
        if not isinstance(comparator, dict) or comparator.get("property") not in submissions.SORTS:
            call.fail("unsupportedSort", "sort by emailId, threadId or sentAt")
        query.sort.append((comparator["property"], bool(comparator.get("isAscending", True))))
    return query


async def _query_ids(call: MethodCall, conn: Conn) -> list[str]:
    return await submissions.query_ids(conn, call.account.address_id, _query(call))


async def submission_query(call: MethodCall) -> dict[str, Any]:
    account = call.account
    async with call.connection() as conn:
        state = await methods.state(conn, account.address_id, TYPE)
        ids = await _query_ids(call, conn)
    return {
        "accountId": account.id,
        "queryState": state,
        "canCalculateChanges": True,
        **methods.window(call, ids),
    }


async def submission_query_changes(call: MethodCall) -> dict[str, Any]:
    account = call.account
    async with call.connection() as conn:
        changed = await methods.changed_since(call, conn, TYPE)
        state = await methods.state(conn, account.address_id, TYPE)
        ids = await _query_ids(call, conn)
    return methods.query_changes(
        call,
        old_state=call.arguments["sinceQueryState"],
        new_state=state,
        changed=changed,
        current_ids=ids,
    )


# -- creating: the envelope, the checks, the queue ---------------------------


def _address(value: Any, prop: str) -> dict[str, Any]:
    if (
        not isinstance(value, dict)
        or not isinstance(value.get("email"), str)
        or set(value) - {"email", "parameters"}
    ):
        raise Invalid(set_error("invalidProperties", properties=[prop]))
    params = value.get("parameters")
    if params is not None and (
        not isinstance(params, dict)
        or not all(isinstance(v, (str, type(None))) for v in params.values())
    ):
        raise Invalid(set_error("invalidProperties", properties=[prop]))
    return {"email": value["email"], "parameters": params}


def _derived_envelope(account: Account, raw: bytes) -> dict[str, Any]:
    """RFC 8621 7: mailFrom is the Sender (else From), rcptTo the To, Cc and Bcc addresses."""
    msg = read_message(raw)
    senders = [a for _, a in getaddresses(header_values(msg, "sender")) if a]
    senders = senders or [a for _, a in getaddresses(header_values(msg, "from")) if a]
    rcpts: dict[str, str] = {}
    for name in ("to", "cc", "bcc"):
        for _, addr in getaddresses(header_values(msg, name)):
            if addr:
                rcpts.setdefault(addr.lower(), addr)
    return {
        "mailFrom": {"email": senders[0] if senders else account.email, "parameters": None},
        "rcptTo": [{"email": r, "parameters": None} for r in rcpts.values()],
    }


def _hold(parameters: dict[str, Any] | None, now: datetime, longest: int) -> datetime | None:
    """The FUTURERELEASE release time (RFC 4865 HOLDFOR / HOLDUNTIL), or None."""
    if not parameters:
        return None
    upper = {k.upper(): v for k, v in parameters.items()}
    unknown = set(upper) - {"HOLDFOR", "HOLDUNTIL"}
    if unknown:
        raise Invalid(
            set_error(
                "invalidProperties", "unsupported mailFrom parameter", properties=["envelope"]
            )
        )
    try:
        if "HOLDFOR" in upper:
            seconds = int(str(upper["HOLDFOR"]))
            if seconds < 0:
                raise ValueError
            when = now + timedelta(seconds=seconds)
        elif "HOLDUNTIL" in upper:
            when = datetime.fromisoformat(str(upper["HOLDUNTIL"]).replace("Z", "+00:00"))
            if when.tzinfo is None:
                raise ValueError
        else:
            return None
    except ValueError as exc:
        raise Invalid(
            set_error("invalidProperties", "bad FUTURERELEASE value", properties=["envelope"])
        ) from exc
    if when - now > timedelta(seconds=longest):
        raise Invalid(
            set_error("invalidProperties", "beyond maxDelayedSend", properties=["envelope"])
        )
    return when if when > now else None


def _refused(recipients: list[str]) -> dict[str, str]:
    """Each recipient the check every sending path shares refuses, with its reason."""
    reasons: dict[str, str] = {}
    for rcpt in recipients:
        try:
            check_recipient(rcpt)
        except AddressRefused as exc:
            reasons[rcpt] = str(exc)
    return reasons


def _from_addresses(raw: bytes) -> list[str]:
    msg = read_message(raw)
    return [a.lower() for _, a in getaddresses(header_values(msg, "from")) if a]


def without_bcc(raw: bytes) -> bytes:
    """The message as it leaves: no Bcc header (RFC 8621 7.5, RFC 5322 3.6.3)."""
    head, _ = split_head(raw)
    return _BCC.sub(b"", head) + raw[len(head) :]


async def _create(
    call: MethodCall, conn: Conn, account: Account, values: dict[str, Any]
) -> dict[str, Any]:
    bad = [k for k in values if k not in ("identityId", "emailId", "envelope", "undoStatus")]
    if bad or values.get("undoStatus", "pending") != "pending":
        raise Invalid(set_error("invalidProperties", properties=bad or ["undoStatus"]))
    identity_id = values.get("identityId")
    email_id = values.get("emailId")
    if not isinstance(identity_id, str) or not isinstance(email_id, str):
        missing = [k for k in ("identityId", "emailId") if not isinstance(values.get(k), str)]
        raise Invalid(set_error("invalidProperties", properties=missing))
    identity_id, email_id = call.resolve_id(identity_id), call.resolve_id(email_id)
    identity = None
    if methods.is_uuid(identity_id):
        identity = await identities.email_of(conn, account.address_id, identity_id)
    if identity is None:
        raise Invalid(set_error("invalidProperties", "no such identity", properties=["identityId"]))
    email = None
    if methods.is_uuid(email_id):
        found = await emails.sources(conn, account.address_id, [email_id])
        email = found[0] if found else None
    if email is None:
        raise Invalid(set_error("invalidProperties", "no such email", properties=["emailId"]))
    raw = await call.ctx.blobs.get(email.blob_id)
    own = account.email.lower()
    if str(identity).lower() != own or any(a != own for a in _from_addresses(raw)):
        raise Invalid(set_error("forbiddenFrom", f"this account may only send as {account.email}"))
    envelope: dict[str, Any]
    if values.get("envelope") is not None:
        given = values["envelope"]
        if not isinstance(given, dict) or set(given) - {"mailFrom", "rcptTo"}:
            raise Invalid(set_error("invalidProperties", properties=["envelope"]))
        rcpts = given.get("rcptTo")
        if not isinstance(rcpts, list):
            raise Invalid(set_error("invalidProperties", properties=["envelope"]))
        envelope = {
            "mailFrom": _address(given.get("mailFrom"), "envelope"),
            "rcptTo": [_address(r, "envelope") for r in rcpts],
        }
    else:
        envelope = _derived_envelope(account, raw)
    if envelope["mailFrom"]["email"].lower() != own:
        raise Invalid(
            set_error("forbiddenMailFrom", f"the envelope sender must be {account.email}")
        )
    recipients = [r["email"] for r in envelope["rcptTo"]]
    if not recipients:
        raise Invalid(set_error("noRecipients", "the envelope has no recipients"))
    reasons = _refused(recipients)
    if reasons:
        raise Invalid(
            set_error(
                "invalidRecipients",
                "; ".join(f"{r}: {why}" for r, why in reasons.items()),
                invalidRecipients=list(reasons),
            )
        )
    if len(recipients) > MAX_RECIPIENTS:
        raise Invalid(set_error("tooManyRecipients", maxRecipients=MAX_RECIPIENTS))
    now = call.now
    hold = _hold(envelope["mailFrom"].get("parameters"), now, call.limits.max_delayed_send)
    # The plan's sends_per_month, counted in this transaction like the sending API's
    # (one message is one send); RFC 8621 7.5's forbiddenToSend says why it is refused.
    submission_id = str(uuid.uuid4())
    try:
        await submit(
            conn,
            Submission(
                message_id=submission_id,
                source="jmap",
                mail_from=account.email,
                recipients=recipients,
                raw=without_bcc(raw),
                account_id=account.owner_account_id,
                address_id=account.address_id,
                sends=Sends.COUNT,
                send_at=hold,
            ),
            now=now,
            max_lifetime=call.ctx.mta.config.outbound_max_lifetime,
        )
    except SendRefused as exc:
        raise Invalid(set_error("forbiddenToSend", exc.message)) from None
    send_at = hold or now
    await submissions.create(
        conn,
        submission_id,
        account.address_id,
        identity_id=identity_id,
        email_id=email_id,
        thread_id=email.thread_id,
        envelope=envelope,
        send_at=send_at,
        now=now,
    )
    return {
        "id": submission_id,
        "threadId": email.thread_id,
        "sendAt": _utc(send_at),
        "undoStatus": "pending" if hold else "final",
        "_email": email_id,
    }


async def _update(
    call: MethodCall, conn: Conn, account: Account, submission_id: str, patch: dict[str, Any]
) -> None:
    row = None
    if methods.is_uuid(submission_id):
        row = await submissions.find(conn, account.address_id, submission_id)
    if row is None:
        raise Invalid(set_error("notFound"))
    current = undo_status(row.message_status)
    for key, value in patch.items():
        if key == "undoStatus" and value in ("canceled", current):
            continue
        raise Invalid(
            set_error("invalidProperties", "only undoStatus may change", properties=[key])
        )
    cancel = patch.get("undoStatus") == "canceled" and current != "canceled"
    if cancel and not await outbound.cancel_scheduled(
        conn, account.owner_account_id, submission_id, call.now
    ):
        raise Invalid(set_error("cannotUnsend", "the message has already been sent"))
        # The trigger of migration 0050 records the EmailSubmission change.


def _implicit_email_update(
    call: MethodCall, created: dict[str, Any], succeeded: list[str]
) -> dict[str, Any]:
    """onSuccessUpdateEmail / onSuccessDestroyEmail as Email/set arguments (RFC 8621 7.5)."""
    emails: dict[str, str] = {}  # "#creationId" or submission id -> email id
    for creation_id, item in created.items():
        emails[f"#{creation_id}"] = item["_email"]
        emails[item["id"]] = item["_email"]
    update: dict[str, Any] = {}
    destroy: list[str] = []
    on_update = call.arguments.get("onSuccessUpdateEmail") or {}
    on_destroy = call.arguments.get("onSuccessDestroyEmail") or []
    if not isinstance(on_update, dict) or not isinstance(on_destroy, list):
        call.fail("invalidArguments", "onSuccessUpdateEmail / onSuccessDestroyEmail malformed")
    for ref, patch in on_update.items():
        if ref in emails and (ref.startswith("#") or ref in succeeded):
            update[emails[ref]] = patch
    for ref in on_destroy:
        if ref in emails and (ref.startswith("#") or ref in succeeded):
            destroy.append(emails[ref])
    args: dict[str, Any] = {"accountId": call.account.id}
    if update:
        args["update"] = update
    if destroy:
        args["destroy"] = destroy
    return args


async def submission_set(call: MethodCall) -> dict[str, Any]:
    account = call.account
    create, update, destroy = methods.set_arguments(call)
    out = SetResponse(account.id)
    async with call.transaction() as conn:
        out.old_state = await methods.check_if_in_state(call, conn, TYPE)
        for creation_id, values in create.items():
            try:
                async with _savepoint(conn):
                    item = await _create(call, conn, account, values)
                out.created[creation_id] = item
                call.created(creation_id, item["id"])
            except Invalid as exc:
                out.not_created[creation_id] = exc.error
        for submission_id, patch in update.items():
            submission_id = call.resolve_id(submission_id)
            try:
                async with _savepoint(conn):
                    await _update(call, conn, account, submission_id, patch)
                out.updated[submission_id] = None
            except Invalid as exc:
                out.not_updated[submission_id] = exc.error
        for submission_id in destroy:
            submission_id = call.resolve_id(submission_id)
            # Destroying the record does not unsend (RFC 8621 7.5): only the history goes.
            if methods.is_uuid(submission_id) and await submissions.destroy(
                conn, account.address_id, submission_id, call.now
            ):
                out.destroyed.append(submission_id)
            else:
                out.not_destroyed[submission_id] = set_error("notFound")
        out.new_state = await methods.state(conn, account.address_id, TYPE)
    implicit = _implicit_email_update(call, out.created, [*out.updated, *out.destroyed])
    for item in out.created.values():
        item.pop("_email")
    response = out.arguments()
    if "update" in implicit or "destroy" in implicit:
        async with call.connection() as conn:
            result = await write.set_emails(
                email_context(call.ctx, account),
                conn,
                account.address_id,
                implicit,
                created_ids=call.request.created_ids,
                hostname=call.ctx.mta.config.smtp_hostname,
            )
        call.respond("Email/set", result)
    return response


register("EmailSubmission/get", submission_get, capability=SUBMISSION)
register("EmailSubmission/changes", submission_changes, capability=SUBMISSION)
register("EmailSubmission/query", submission_query, capability=SUBMISSION)
register("EmailSubmission/queryChanges", submission_query_changes, capability=SUBMISSION)
register("EmailSubmission/set", submission_set, capability=SUBMISSION)
