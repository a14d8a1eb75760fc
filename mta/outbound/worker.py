"""The outbound queue worker: claim due recipients, sign, deliver, record, retry or bounce.

Each round claims due recipients (SKIP LOCKED, a lease: mta/store/outbound.py),
reads each message once, signs it once with its From domain's DKIM key, and
tries every recipient over a session to its destination (mta/outbound/client.py).
The outcomes of one message are written in one transaction with their events,
activity, suppressions and the DSN they cause. Woken by the NOTIFY an enqueue
sends at commit, by the job queue (``mta.outbound``, every minute, so a
process that missed a NOTIFY still drains the queue), and when the next
retry is due.

Outcomes, per recipient:

* 2xx: delivered.
* 5xx (or a permanent routing failure: null MX, no such domain): bounced.
  An address failure (enhanced status 5.1.x, or a bare 550/551/553) adds it
  to the account's suppressions. Submission mail gets a DSN to its sender.
* 4xx, a connection failure, a DNS timeout: deferred until the next step of
  OUTBOUND_RETRY_SCHEDULE; past the message's lifetime: failed (and a DSN).
* Suppressed since it was queued: not attempted, 'suppressed', with an
  email.suppressed event (a message none of whose recipients was attempted for
  that reason ends 'suppressed', Resend's last_event).
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from common import metrics
from common.db import Conn
from common.logs import reset_request_id, set_request_id
from common.outbound import OutboundClient
from mail import directory
from mta import lines, received, redirect
from mta.context import MtaContext
from mta.outbound import dsn, signer
from mta.outbound.client import ConnectFailed, Connections, transact
from mta.outbound.mtasts import PolicyCache
from mta.outbound.routing import RouteFailure, route
from mta.outbound.smtp import Disconnected, SMTPError
from mta.outbound.submit import (
    Submission,
    submit,
)
from mta.srs import SrsError
from mta.store import activity, outbound, suppressions
from mta.store.outbound import Claimed, Outcome

log = logging.getLogger(__name__)

BATCH = 200
POLL_SECONDS = 1.0
RESTART_SECONDS = 5.0
# The local part of the Return-Path that asynchronous bounces come back to:
# bounces+<recipient token>@<sending domain> (mta/outbound/bounces.py).
VERP_PREFIX = "bounces+"
# Sources whose sender is a person with a mailbox: they get DSNs. A redirect's
# DSN goes to the original sender its SRS envelope sender stands for.
DSN_SOURCES = ("submission", "webmail", "jmap", "redirect")
# Sources whose bounces come back to us through VERP.
VERP_SOURCES = ("submission", "api", "webmail", "jmap")
# Each message's signing key (None: unsigned) by message id, read with the claim
# for the messages whose raw came with it (signer.claim_keys).
Keys = dict[str, directory.SigningKey | None]

_ENHANCED = re.compile(r"\b([245])\.(\d{1,3})\.(\d{1,3})\b")


def address_failure(reply: str) -> bool:
    """Does this permanent reply say the address itself is bad (a hard bounce)?"""
    found = _ENHANCED.search(reply)
    if found:
        return found.group(1) == "5" and found.group(2) == "1"
    return reply[:3] in ("550", "551", "553")


def domain_of(address: str) -> str:
    domain = address.rpartition("@")[2].strip().rstrip(".").lower()
    try:
        return domain.encode("idna").decode("ascii")
    except UnicodeError:
        return domain


def envelope_sender(item: Claimed) -> str:
    """The MAIL FROM: the VERP Return-Path, or the sender as given ('' for a DSN)."""
    if item.mail_from and item.account_id and item.source in VERP_SOURCES:
        return f"{VERP_PREFIX}{item.verp}@{domain_of(item.mail_from)}"
    return item.mail_from


@dataclass
class _Attempt:
    item: Claimed
    outcome: Outcome


class OutboundWorker:
    def __init__(self, ctx: MtaContext) -> None:
        self.ctx = ctx
        config = ctx.config
        self.db = ctx.runtime.db
        self.clock = ctx.runtime.clock
        secret = ctx.runtime.settings.secret
        self.key_sealer = directory.key_sealer(secret)
        self.raw_sealer = outbound.outbound_sealer(secret)
        self.connections = Connections(
            config.smtp_hostname,
            per_destination=config.outbound_per_destination,
            idle=config.outbound_idle,
            timeout=config.outbound_timeout,
        )
        self.http = OutboundClient(timeout=10)
        self.signing = signer.SigningPool(config.outbound_signing_processes)
        self.policies = (
            PolicyCache(ctx.resolver, self._fetch_policy)
            if config.mta_sts and config.outbound_relay is None
            else None
        )
        self.poll_seconds = POLL_SECONDS
        # Recipients being tried by run(): at most OUTBOUND_CONCURRENCY.
        self._inflight = 0
        self._wake = asyncio.Event()
        # Set by what may have made mail due (a NOTIFY, the timer), not by a
        # finished delivery: see _listen_and_work.
        self._news = True
        self._tasks: set[asyncio.Task[None]] = set()

    async def _fetch_policy(self, url: str) -> tuple[int, bytes]:
        answer = await self.http.get(url, limit=64 * 1024)
        return answer.status, answer.body

    def wake(self) -> None:
        """New mail or a lost connection: claim now, whatever is in flight."""
        self._news = True
        self._wake.set()

    # One round, awaited: the job queue's handler and the tests use it.
    async def run_once(self) -> int:
        claimed, keys = await self._claim(BATCH)
        await asyncio.gather(*(self._message(items, keys) for items in _by_message(claimed)))
        return len(claimed)

    async def drain(self) -> int:
        """Rounds until nothing is due now; how many recipients were tried."""
        total = 0
        while count := await self.run_once():
            total += count
        return total

    async def run(self) -> None:
        """Work the queue until cancelled; a lost database connection is retried."""
        try:
            while True:
                try:
                    await self._listen_and_work()
                except Exception:
                    log.exception("outbound worker stopped; starting again in 5 s")
                    await asyncio.sleep(RESTART_SECONDS)
        finally:
            await self.close()

    async def _listen_and_work(self) -> None:
        """Claims as slots free, never waits on a slow host.

        Woken by the queue's NOTIFY through the process's notification hub
        (common/notify.py), and after a lost connection by its gap; between
        wake-ups it sleeps until the next retry is due, at most poll_seconds.
        A finished delivery wakes it too, but frees only its own slot: it
        claims again once a quarter of OUTBOUND_CONCURRENCY is free (or
        nothing is in flight), so a full queue is claimed in chunks, one
        transaction for many messages, not one claim and commit per message.
        New mail (a NOTIFY) and a due retry (the timer) are claimed at once.
        """
        notifications = self.ctx.runtime.notifications
        subscription = notifications.subscribe(
            outbound.CHANNEL, lambda _payload: self.wake(), on_gap=self.wake
        )
        refill = max(1, self.ctx.config.outbound_concurrency // 4)
        self._news = True
        try:
            async with notifications.running():
                while True:
                    self._wake.clear()
                    free = self.ctx.config.outbound_concurrency - self._inflight
                    news, self._news = self._news, False
                    claiming = free > 0 and (news or free >= refill or not self._inflight)
                    claimed, keys = await self._claim(min(BATCH, free)) if claiming else ([], {})
                    for items in _by_message(claimed):
                        self._inflight += len(items)
                        task = asyncio.create_task(self._counted(items, keys))
                        self._tasks.add(task)
                        task.add_done_callback(self._done)
                    if claimed and len(claimed) >= min(BATCH, free):
                        self._news = True  # more may be due now
                        continue
                    pause = await self._pause() if claiming else self.poll_seconds
                    try:
                        await asyncio.wait_for(self._wake.wait(), pause)
                    except TimeoutError:
                        self._news = True  # a retry may have come due
        finally:
            subscription.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _counted(self, items: list[Claimed], keys: Keys) -> None:
        try:
            await self._message(items, keys)
        finally:
            self._inflight -= len(items)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._wake.set()
        if not task.cancelled() and task.exception() is not None:
            log.error("outbound delivery task failed", exc_info=task.exception())

    async def _pause(self) -> float:
        """Until the next retry is due, at most poll_seconds (the clock may be moved)."""
        try:
            async with self.db.connection() as conn:
                due = await outbound.next_due(conn)
        except Exception:
            log.exception("outbound queue scan failed")
            return self.poll_seconds
        if due is None:
            return self.poll_seconds
        return max(0.0, min(self.poll_seconds, (due - self.clock.now()).total_seconds()))

    async def close(self) -> None:
        await self.connections.close()
        await self.http.close()
        await self.signing.close()

    async def _claim(self, limit: int) -> tuple[list[Claimed], Keys]:
        """Due recipients, and the signing keys of the messages that came with them
        (read once per From domain: one statement for the claim)."""
        now = self.clock.now()
        lease = timedelta(seconds=self.ctx.config.outbound_lease)
        try:
            async with self.db.transaction() as conn:
                claimed = await outbound.claim(conn, now, lease, limit)
                if not claimed:
                    return [], {}
                await outbound.start_sending(conn, list({c.message_id for c in claimed}), now)
                raws = {c.message_id: c.raw for c in claimed if c.raw is not None}
                keys = await signer.claim_keys(conn, self.key_sealer, raws)
        except Exception:
            log.exception("claiming outbound mail failed")
            return [], {}
        return claimed, keys

    async def _message(self, items: list[Claimed], keys: Keys) -> None:
        """Every claimed recipient of one message, then their outcomes in one transaction."""
        # Its log lines carry the id of the request that queued it.
        token = set_request_id(items[0].trace_id)
        try:
            await self._deliver_message(items, keys)
        finally:
            reset_request_id(token)

    async def _deliver_message(self, items: list[Claimed], keys: Keys) -> None:
        first = items[0]
        # The claim said which ASCII addresses are suppressed; others are asked here.
        blocked = {i.rcpt.lower() for i in items if i.suppressed}
        others = [i.rcpt for i in items if not i.rcpt.isascii()] if first.account_id else []
        raw = first.raw
        prepared: tuple[bytes, directory.SigningKey | None] | None = None
        if raw is not None and first.message_id in keys and not others:
            # All the claim brought: no connection needed.
            prepared = (lines.to_crlf(self._traced(first, raw)), keys[first.message_id])
        else:
            async with self.db.connection() as conn:
                if raw is None:
                    raw = await outbound.raw_of(conn, first.message_id, self.raw_sealer)
                if others:
                    blocked |= await suppressions.suppressed(conn, first.account_id or "", others)
                if raw is not None:
                    raw = self._traced(first, raw)
                    if first.message_id in keys:
                        prepared = (lines.to_crlf(raw), keys[first.message_id])
                    else:
                        prepared = await signer.prepare(conn, self.key_sealer, raw)
        # Signed once for all its recipients, in a signing process, no connection held.
        data = await signer.apply(*prepared, self.signing) if prepared is not None else None
        attempts = await asyncio.gather(
            *(self._attempt(item, data, item.rcpt.lower() in blocked) for item in items)
        )
        outcomes: dict[str, int] = {}
        for attempt in attempts:
            metrics.OUTBOUND_ATTEMPTS.labels(attempt.outcome.status).inc()
            outcomes[attempt.outcome.status] = outcomes.get(attempt.outcome.status, 0) + 1
        await self._record(first, attempts)
        # One line per message and attempt round (no addresses: the activity log has them).
        log.info(
            "outbound message %s: %s",
            first.message_id,
            ", ".join(f"{n} {status}" for status, n in sorted(outcomes.items())),
            extra={"message_id": first.message_id, "source": first.source, "outcomes": outcomes},
        )

    def _traced(self, first: Claimed, raw: bytes) -> bytes:
        """``raw`` with the Received field naming its trace (submission wrote its own at DATA)."""
        if not first.trace_id or first.source == "submission":
            return raw
        received_field = received.queued(
            hostname=self.ctx.config.smtp_hostname,
            queue_id=first.message_id,
            trace=first.trace_id,
            now=first.created_at,
        )
        return received_field + raw

    async def _attempt(self, item: Claimed, data: bytes | None, blocked: bool) -> _Attempt:
        now = self.clock.now()
        if blocked:
            return _Attempt(
                item,
                Outcome(
                    item.message_id,
                    item.position,
                    "suppressed",
                    f"suppressed: {outbound.SUPPRESSED_MESSAGE}",
                    attempted=False,
                ),
            )
        if data is None:
            return _Attempt(
                item,
                Outcome(item.message_id, item.position, "failed", "the message content is gone"),
            )
        reply, host, permanent = await self._deliver(item, data)
        if reply.startswith("2"):
            status = "delivered"
        elif permanent:
            status = "bounced"
        else:
            return _Attempt(item, self._deferral(item, reply, host, now))
        return _Attempt(item, Outcome(item.message_id, item.position, status, reply, host))

    async def _deliver(self, item: Claimed, data: bytes) -> tuple[str, str, bool]:
        """(the deciding reply line, the host that gave it, whether it is permanent)."""
        config = self.ctx.config
        domain = domain_of(item.rcpt)
        try:
            where = await route(
                self.ctx.resolver,
                domain,
                relay=config.outbound_relay,
                port=config.outbound_smtp_port,
                policies=self.policies,
            )
        except RouteFailure as exc:
            return exc.reply, "", exc.permanent
        sender = envelope_sender(item)
        for attempt in range(2):  # an idle session the server closed: once more, fresh
            try:
                async with self.connections.session(where) as session:
                    answer = await transact(session, sender, item.rcpt, data)
                return answer.line, answer.host, answer.permanent
            except Disconnected as exc:
                if attempt:
                    return f"451 4.4.2 connection lost: {exc}", where.hosts[0].name, False
            except ConnectFailed as exc:
                return f"451 4.4.1 could not connect: {exc}", "", False
            except (SMTPError, OSError, TimeoutError) as exc:
                return f"451 4.4.2 {type(exc).__name__}: {exc}", where.hosts[0].name, False
        raise AssertionError("unreachable")

    def _deferral(self, item: Claimed, reply: str, host: str, now: datetime) -> Outcome:
        config = self.ctx.config
        schedule = config.outbound_retry_schedule
        delay = schedule[min(item.attempts, len(schedule) - 1)]
        retry_at = now + timedelta(seconds=delay)
        due_since = item.scheduled_at or item.created_at
        expires = min(item.expires_at, due_since + timedelta(seconds=config.outbound_max_lifetime))
        if retry_at >= expires:
            return Outcome(
                item.message_id,
                item.position,
                "failed",
                f"{reply} (gave up after {item.attempts + 1} attempts: message expired)",
                host,
            )
        return Outcome(item.message_id, item.position, "deferred", reply, host, retry_at)

    async def _record(self, first: Claimed, attempts: list[_Attempt]) -> None:
        """One message's outcomes in one transaction, shared with others finishing now."""
        now = self.clock.now()

        async def work(conn: Conn) -> None:
            await self._write(conn, first, attempts, now)

        await self.ctx.committer.run(work)

    async def _write(
        self, conn: Conn, first: Claimed, attempts: list[_Attempt], now: datetime
    ) -> None:
        info = first.subject
        # With the group commit's other messages' outcomes, in one statement.
        await outbound.record_outcomes(conn, [a.outcome for a in attempts], now)
        for attempt in attempts:
            outcome = attempt.outcome
            if outcome.status == "bounced":
                if first.account_id and address_failure(outcome.reply):
                    await suppressions.ensure(
                        conn,
                        first.account_id,
                        attempt.item.rcpt,
                        "bounce",
                        now,
                        first.message_id,
                    )
                await outbound.record_bounce_event(
                    conn, first.message_id, attempt.item.rcpt, outcome.reply, now
                )
            elif outcome.status == "suppressed":
                await outbound.record_suppressed_event(
                    conn, first.message_id, attempt.item.rcpt, now
                )
            if first.address_id and outcome.attempted:
                await activity.record(
                    conn,
                    activity.Event(
                        address_id=first.address_id,
                        kind=_ACTIVITY_KIND.get(outcome.status, "failed"),
                        outcome=f"{outcome.status} to {attempt.item.rcpt}",
                        peer=outcome.destination,
                        sender=first.mail_from,
                        subject=info,
                        detail=outcome.reply,
                    ),
                    now,
                )
        failed = [a for a in attempts if a.outcome.status in ("bounced", "failed")]
        extra = None
        if any(a.outcome.status == "failed" for a in attempts):
            extra = {"failed": {"reason": failed[-1].outcome.reply}}
        dsn_to_sender = bool(failed and first.mail_from and first.source in DSN_SOURCES)
        # Read before settle, which erases the raw of a message that became final.
        original = (
            await outbound.raw_of(conn, first.message_id, self.raw_sealer)
            if dsn_to_sender
            else None
        )
        await outbound.settle_later(conn, first.message_id, now, extra=extra)
        if dsn_to_sender:
            await self._bounce_to_sender(conn, first, failed, original or b"", now)

    async def _bounce_to_sender(
        self, conn: Conn, first: Claimed, failed: Iterable[_Attempt], raw: bytes, now: datetime
    ) -> None:
        host = self.ctx.config.smtp_hostname
        to = first.mail_from
        if first.source == redirect.SOURCE:
            try:
                to = redirect.srs(self.ctx).reverse(to.rpartition("@")[0])
            except SrsError:
                return  # not an address we rewrote: nobody to tell
        report = dsn.build(
            reporting_host=host,
            mail_from=f"MAILER-DAEMON@{host}",
            original_rcpt_from=first.mail_from,
            failures=[
                dsn.Failure(a.item.rcpt, a.outcome.reply, a.outcome.destination) for a in failed
            ],
            original=raw,
            now=now,
        )
        await submit(
            conn,
            Submission(
                message_id=str(uuid.uuid4()),
                source="system",
                mail_from="",
                recipients=[to],
                raw=report,
                account_id=first.account_id,
            ),
            now=now,
            max_lifetime=self.ctx.config.outbound_max_lifetime,
        )


_ACTIVITY_KIND = {"delivered": "sent", "deferred": "deferred", "bounced": "bounced"}


def _by_message(claimed: list[Claimed]) -> list[list[Claimed]]:
    groups: dict[str, list[Claimed]] = defaultdict(list)
    for item in claimed:
        groups[item.message_id].append(item)
    return list(groups.values())
