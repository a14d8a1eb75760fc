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

from datetime import datetime

from common.db import Conn
from mta.sieve.compiler import MAX_SCRIPT_BYTES, Script, SieveError, compile_script
from mta.store import activity, events, mailboxes, quota
from mta.store import filters as _filters
from mta.store.activity import Activity
from mta.store.events import Event
from mta.store.filters import Filter
from mta.store.mailboxes import Folder, create_default_mailboxes

__all__ = [
    "EVENTS_CHANNEL",
    "FILTER_SORTS",
    "MAX_SCRIPT_BYTES",
    "Activity",
    "DailyCount",
    "Event",
    "Filter",
    "Folder",
    "Script",
    "SieveError",
    "activity_page",
    "compile_script",
    "create_default_mailboxes",
    "delete_filter",
    "email_events",
    "event_counts_since",
    "event_daily_counts",
    "event_time",
    "filter_page",
    "folders",
    "get_event",
    "get_filter",
    "insert_filter",
    "mark_events_dispatched",
    "recent_events",
    "record_event",
    "roll_up_event_counts",
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
# The Overview: counts by type and UTC day, the newest events, an account's usage.
DailyCount = events.DailyCount
event_daily_counts = events.daily_counts
roll_up_event_counts = events.roll_up
event_counts_since = events.counts_since
recent_events = events.recent
usage_of = quota.usage_of
event_time = events.iso
