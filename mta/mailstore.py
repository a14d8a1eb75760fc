"""The mailbox store as mail/ sees it: the one module of mta that mail/ imports.

mta owns the ``mta`` schema (mailboxes, emails, quota usage, activity, Sieve
filters) and everything that reads or writes it. The panel today, and webmail
next, reach it only through the names below, each taking the connection
first so they join the caller's transaction (an address and its default
folders are created in one). docs/architecture.md, "mail/ and mta/", draws
the boundary; tests/test_boundaries.py holds it.

Deletes need no call: an address's folders, messages, filters, activity and
quota row reference ``mail.addresses`` ON DELETE CASCADE (mta/migrations),
so deleting an address or a domain in mail's transaction takes them along,
and the hourly blob collection (mta/service.py) frees their bodies.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from common.crypto import Sealer
from common.db import Conn
from common.runtime import Runtime
from mta.imports import Imported, Importer, OverQuota, Target, message_id_of
from mta.jmap.email import blobs as _email_blobs
from mta.jmap.email import get as _email_get
from mta.jmap.email import query as _email_query
from mta.jmap.email import write as _email_write
from mta.jmap.email.context import EmailContext, UploadReader
from mta.jmap.email.errors import MethodError
from mta.outbound import submit as outbound_submit
from mta.sieve.compiler import MAX_SCRIPT_BYTES, Script, SieveError, compile_script
from mta.store import activity, changes, events, mailboxes, outbound, quota, suppressions
from mta.store import filters as _filters
from mta.store.activity import Activity
from mta.store.events import Event
from mta.store.filters import Filter
from mta.store.mailboxes import Folder, create_default_mailboxes
from mta.store.outbound import OutboundStatus, RecipientStatus, outbound_sealer
from mta.store.raw import RawMessages
from mta.store.suppressions import Suppression

__all__ = [
    "CHANGES_CHANNEL",
    "EVENTS_CHANNEL",
    "FILTER_SORTS",
    "MAX_SCRIPT_BYTES",
    "OUTBOUND_CHANNEL",
    "SUPPRESSED_MESSAGE",
    "SUPPRESSED_TYPE",
    "SUPPRESSION_SORTS",
    "Activity",
    "DailyCount",
    "EmailContext",
    "Event",
    "Filter",
    "Folder",
    "Imported",
    "Importer",
    "MethodError",
    "OutboundStatus",
    "OverQuota",
    "RecipientStatus",
    "Script",
    "SendRefused",
    "Sends",
    "SieveError",
    "Submission",
    "Suppression",
    "Target",
    "activity_page",
    "add_suppression",
    "cancel_scheduled",
    "compile_script",
    "create_default_mailboxes",
    "create_folder",
    "default_folders",
    "delete_filter",
    "delete_folder",
    "delete_suppression",
    "email_context",
    "email_events",
    "email_get",
    "email_import",
    "email_query",
    "email_set",
    "email_state",
    "enqueue",
    "event_counts_since",
    "event_daily_counts",
    "event_time",
    "filter_page",
    "find_folder",
    "folders",
    "get_event",
    "get_filter",
    "insert_filter",
    "mark_events_dispatched",
    "message_id_of",
    "outbound_sealer",
    "outbound_status",
    "outbound_statuses",
    "read_message_blob",
    "read_message_part",
    "recent_events",
    "record_event",
    "reschedule",
    "roll_up_event_counts",
    "submit",
    "suppressed",
    "suppression_page",
    "undispatched_events",
    "update_filter",
    "usage",
    "usage_of",
]

# Folders: Inbox, Drafts, Sent... (create_default_mailboxes, in the address's transaction).


async def folders(conn: Conn, address_id: str, now: datetime) -> list[Folder]:
    """The address's folders with their counts, in display order."""
    found = await mailboxes.folders(conn, address_id)
    if not found:  # an address created before its folders were: make them now
        await create_default_mailboxes(conn, address_id, now)
        found = await mailboxes.folders(conn, address_id)
    return found


# Counts: (bytes used, number of emails) of an address; (0, 0) before its first message.
usage = quota.usage

# Activity: the address's delivery log, newest first.
activity_page = activity.page

# Sieve filters: stored per address, run by delivery, compiled on every save.
FILTER_SORTS = _filters.SORTS
filter_page = _filters.page
get_filter = _filters.get
insert_filter = _filters.insert
update_filter = _filters.update
delete_filter = _filters.delete

# Events: the account's webhook-deliverable log (email.*, domain.*, address.*),
# written in the transaction of the change each reports; see mta/store/events.py.
EVENTS_CHANNEL = events.CHANNEL
record_event = events.record
get_event = events.get
email_events = events.for_email
undispatched_events = events.undispatched
mark_events_dispatched = events.mark_dispatched

# The outbound queue: everything that leaves. mail/ builds the MIME and calls
# enqueue in the transaction that records its side (the API's sent email, an
# account token); the worker in mta/outbound delivers, signs with DKIM, retries,
# bounces, and writes the email.* events. Status is Resend's last_event.
OUTBOUND_CHANNEL = outbound.CHANNEL


# One way to send (mta/outbound/submit.py): mail's paths (the sending API,
# webmail, the panel's own mail) build a Submission and call submit in their
# transaction, as every path of mta does.
Submission = outbound_submit.Submission
Sends = outbound_submit.Sends
SendRefused = outbound_submit.SendRefused
submit = outbound_submit.submit


async def enqueue(
    conn: Conn,
    *,
    message_id: str,
    account_id: str | None,
    source: str,
    mail_from: str,
    recipients: list[str],
    raw: bytes,
    now: datetime,
    scheduled_at: datetime | None = None,
    event_data: dict[str, Any] | None = None,
    sealer: Sealer | None = None,
    lifetime: timedelta = outbound.DEFAULT_LIFETIME,
) -> None:
    """:func:`submit` with keywords and no plan counted: what the tests queue with."""
    await submit(
        conn,
        Submission(
            message_id=message_id,
            source=source,
            mail_from=mail_from,
            recipients=recipients,
            raw=raw,
            account_id=account_id,
            send_at=scheduled_at,
            event_data=event_data,
            sealer=sealer,
        ),
        now=now,
        max_lifetime=int(lifetime.total_seconds()),
    )


outbound_status = outbound.status
# What an email.suppressed event's `suppressed` object says.
SUPPRESSED_MESSAGE = outbound.SUPPRESSED_MESSAGE
SUPPRESSED_TYPE = outbound.SUPPRESSED_TYPE
outbound_statuses = outbound.statuses
cancel_scheduled = outbound.cancel_scheduled
reschedule = outbound.reschedule

# Suppressions: addresses an account's mail is not sent to.
SUPPRESSION_SORTS = suppressions.SORTS
suppression_page = suppressions.page
add_suppression = suppressions.add
delete_suppression = suppressions.delete
suppressed = suppressions.suppressed


# --- Webmail (mail/webmail/): the JMAP Email functions, one implementation of
# mail semantics behind two front doors (docs/mail.md, "Webmail"). Each takes
# (EmailContext, conn, address_id, JMAP arguments) and answers JMAP arguments.
def email_context(runtime: Runtime, uploads: UploadReader | None = None) -> EmailContext:
    """The Email functions' context for a process that is not the mta (the gateway's mail)."""
    ctx = EmailContext(
        raw=RawMessages.of(runtime),
        clock=runtime.clock,
    )
    if uploads is not None:
        ctx.uploads = uploads
    return ctx


email_get = _email_get.get
email_query = _email_query.query
email_set = _email_write.set_emails
email_import = _email_write.import_emails
read_message_blob = _email_blobs.read_blob
read_message_part = _email_blobs.read_part
# Every change the store logs NOTIFYs this channel with the address id (live updates).
CHANGES_CHANNEL = "mta_changes"
default_folders = mailboxes.ensure_defaults
find_folder = mailboxes.find_path
create_folder = mailboxes.create_path
delete_folder = mailboxes.delete_folder
email_state = changes.state
# Imports (mail transfers): ``Importer(runtime).store(address_id, Target(role=...|path=...),
# raw, keywords=..., received_at=..., quota_bytes=..., also=checkpoint)`` stores one
# message the way delivery does, skipping one already there (mta/imports.py).
# The Overview: counts by type and UTC day, the newest events, an account's usage.
DailyCount = events.DailyCount
event_daily_counts = events.daily_counts
roll_up_event_counts = events.roll_up
event_counts_since = events.counts_since
recent_events = events.recent
usage_of = quota.usage_of
event_time = events.iso
