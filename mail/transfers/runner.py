"""Running transfers: claimed through the job queue, resumed after a restart, cancelled in seconds.

A transfer can take hours, so it does not run inside a job (the worker runs
jobs one after another, under a five-minute lease). Jobs only *start* them:
``mail.transfers.kick`` (enqueued by POST) and the recurring
``mail.transfers.sweep`` claim transfers for this process, up to
TRANSFER_MAX_CONCURRENT at once, and each runs as a task of its own.

A running transfer's row names its process (``worker``) and is refreshed
every second (``heartbeat_at``); the same refresh sees a cancel (the row is
no longer ``running``) and stops the task at once. A process that stops
cleanly releases its rows, which the next sweep (or the next process's start)
takes; one that was killed leaves a heartbeat that goes stale after
TRANSFER_STALE_SECONDS, and then another process takes it over. It resumes
from the folder plan and each folder's UIDVALIDITY and last imported UID,
written in the transaction of every imported message; the destination's
duplicate check (Message-ID and size) covers the one message that may have
been stored just before a kill.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import socket
from dataclasses import dataclass

from common.crypto import SealError
from common.db import Conn
from common.ids import short_id
from common.jobs import Job, JobQueue
from mail import directory
from mail.context import MailContext
from mail.transfers import imap, store
from mail.transfers.imap import SourceError, SourceFolder
from mail.transfers.service import KICK_JOB, transfer_sealer
from mail.transfers.settings import load_transfer_settings
from mta.mailstore import Importer, OverQuota, Target, message_id_of

log = logging.getLogger(__name__)

SWEEP_JOB = "mail.transfers.sweep"


@dataclass(frozen=True)
class Fetched:
    """One source message: its bytes, or why there are none."""

    raw: bytes | None = None
    error: str | None = None
    duplicate: bool = False


SWEEP_EVERY_SECONDS = 15


class TransferRunner:
    """This process's running transfers."""

    def __init__(self, ctx: MailContext) -> None:
        self.ctx = ctx
        self.settings = load_transfer_settings(ctx.settings)
        self.importer = Importer(ctx.runtime)
        self.sealer = transfer_sealer(ctx.settings.secret)
        self.worker = f"{socket.gethostname()}:{os.getpid()}:{short_id(4)}"
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self._closing = False
        self._kicks: set[asyncio.Task[list[str]]] = set()

    def register(self, jobs: JobQueue) -> None:
        jobs.register(KICK_JOB, self._job)
        jobs.register(SWEEP_JOB, self._job, every=SWEEP_EVERY_SECONDS)

    async def _job(self, job: Job) -> None:
        await self.kick()

    async def kick(self) -> list[str]:
        """Claim what this process has room for and start it; return the ids started."""
        free = self.settings.max_concurrent - len(self.tasks)
        if self._closing or free <= 0:
            return []
        async with self.ctx.db.connection() as conn:
            claimed = await store.claim(
                conn, self.worker, self.ctx.clock.now(), self.settings.stale_seconds, free
            )
        for transfer_id in claimed:
            if transfer_id in self.tasks:  # ours already (its heartbeat was late): keep it
                continue
            task = asyncio.create_task(self._run(transfer_id), name=f"transfer-{transfer_id}")
            self.tasks[transfer_id] = task
            task.add_done_callback(functools.partial(self._ended, transfer_id))
        return claimed

    def _ended(self, transfer_id: str, _task: asyncio.Task[None]) -> None:
        self.tasks.pop(transfer_id, None)
        if not self._closing:  # a slot is free: take the next queued one
            kick = asyncio.get_running_loop().create_task(self._kick_quietly())
            self._kicks.add(kick)
            kick.add_done_callback(self._kicks.discard)

    async def start(self) -> None:
        """At the process's start: take what is waiting (the sweep would, within 15 s)."""
        await self._kick_quietly()

    async def _kick_quietly(self) -> list[str]:
        try:
            return await self.kick()
        except Exception:  # the sweep job tries again
            log.exception("could not start the next transfer")
            return []

    async def wait_idle(self) -> None:
        """Until no transfer runs in this process (tests)."""
        while self.tasks or self._kicks:
            await asyncio.gather(*self.tasks.values(), *self._kicks, return_exceptions=True)

    async def close(self) -> None:
        """Stop every task and hand its transfer back (it stays running, for another process)."""
        self._closing = True
        tasks = list(self.tasks.values()) + list(self._kicks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # --- one transfer ---

    async def _run(self, transfer_id: str) -> None:
        work = asyncio.create_task(self._transfer(transfer_id))
        try:
            while not work.done():
                await asyncio.wait({work}, timeout=self.settings.heartbeat_seconds)
                if work.done():
                    break
                async with self.ctx.db.connection() as conn:
                    ours = await store.heartbeat(
                        conn, transfer_id, self.worker, self.ctx.clock.now()
                    )
                if not ours:  # cancelled (or taken over): stop now
                    work.cancel()
                    with contextlib.suppress(asyncio.CancelledError, store.Lost):
                        await work
                    return
        except asyncio.CancelledError:  # this process is stopping
            work.cancel()
            with contextlib.suppress(BaseException):
                await work
            with contextlib.suppress(Exception):
                async with self.ctx.db.connection() as conn:
                    await store.release(conn, transfer_id, self.worker)
            raise
        state, error = "completed", None
        try:
            work.result()
        except store.Lost:
            return
        except asyncio.CancelledError:
            return
        except SourceError as exc:
            state, error = "failed", str(exc)
        except OverQuota as exc:
            state, error = "failed", str(exc)
        except SealError:
            state, error = "failed", "the stored password could not be read; start again"
        except Exception:
            log.exception("transfer %s stopped on an internal error", transfer_id)
            state, error = "failed", "the transfer stopped on an internal error"
        async with self.ctx.db.connection() as conn:
            await store.finish(conn, transfer_id, self.worker, state, error, self.ctx.clock.now())

    async def _transfer(self, transfer_id: str) -> None:
        async with self.ctx.db.connection() as conn:
            job = await store.job(conn, transfer_id)
        if job is None or job.password_sealed is None:
            raise store.Lost(transfer_id)
        password = self.sealer.open(job.password_sealed)
        source = await imap.connect(
            job.host, job.port, job.tls, job.username, password, self.settings
        )
        try:
            await self._import(job, source)
        finally:
            await source.close()

    async def _import(self, job: store.Job, source: imap.Source) -> None:
        async with self.ctx.db.connection() as conn:
            folders = await store.folders(conn, job.id)
        # The first run lists each folder's messages to count them; it keeps the
        # lists so the import does not ask the source a second time.
        listed: dict[int, list[imap.MessageInfo]] = {}
        if not folders:
            listed = await self._plan(job, source)
            async with self.ctx.db.connection() as conn:
                folders = await store.folders(conn, job.id)
        for folder in folders:
            if not folder.done:
                await self._folder(job, source, folder, listed.get(folder.position))

    async def _plan(self, job: store.Job, source: imap.Source) -> dict[int, list[imap.MessageInfo]]:
        """Every folder with its target and its totals, before the first message."""
        plan: list[tuple[str, str | None, str, int, int, int]] = []
        listed: dict[int, list[imap.MessageInfo]] = {}
        for position, item in enumerate(imap.plan_folders(await source.folders())):
            uidvalidity, exists = await source.examine(item.source)
            infos = await source.messages(0) if exists else []
            listed[position] = infos
            plan.append(
                (
                    item.source.raw,
                    item.role,
                    item.path,
                    uidvalidity,
                    len(infos),
                    sum(i.size for i in infos),
                )
            )
        async with self.ctx.db.transaction() as conn:
            if not await store.save_plan(conn, job.id, self.worker, plan, self.ctx.clock.now()):
                raise store.Lost(job.id)
        return listed

    async def _folder(
        self,
        job: store.Job,
        source: imap.Source,
        folder: store.FolderState,
        listed: list[imap.MessageInfo] | None,
    ) -> None:
        name = imap.decode_utf7(folder.source_name)
        async with self.ctx.db.connection() as conn:
            await store.set_current(conn, job.id, self.worker, name, self.ctx.clock.now())
        uidvalidity, exists = await source.examine(
            SourceFolder(folder.source_name, name, None, frozenset())
        )
        last_uid = folder.last_uid
        if folder.uidvalidity is not None and uidvalidity != folder.uidvalidity:
            # UIDs were renumbered: start the folder over; duplicates are skipped.
            async with self.ctx.db.connection() as conn:
                await store.restart_folder(conn, job.id, folder.position, uidvalidity)
            last_uid = 0
        if listed is not None and last_uid == folder.last_uid == 0:
            infos = listed
        else:
            infos = await source.messages(last_uid) if exists else []
        target = await self.importer.resolve(
            job.address_id, Target(role=folder.target_role, path=folder.target_path)
        )
        # The next message is fetched from the source while this one is stored:
        # the two wait on different servers. One IMAP command in flight at a time.
        pending: asyncio.Task[Fetched] | None = None
        try:
            for index, info in enumerate(infos):
                if pending is None:
                    pending = asyncio.create_task(self._fetch(job, source, name, info))
                fetched = await pending
                pending = None
                if index + 1 < len(infos):
                    pending = asyncio.create_task(self._fetch(job, source, name, infos[index + 1]))
                await self._message(job, folder.position, name, target, info, fetched)
        finally:
            if pending is not None:
                pending.cancel()
                with contextlib.suppress(BaseException):
                    await pending
        async with self.ctx.db.transaction() as conn:
            await store.folder_done(
                conn, job.id, self.worker, folder.position, name, self.ctx.clock.now()
            )

    async def _fetch(
        self, job: store.Job, source: imap.Source, folder_name: str, info: imap.MessageInfo
    ) -> Fetched:
        """The message's bytes; not downloaded when the destination has it already
        (its Message-ID came with the metadata), or too large, or gone."""
        message_id = message_id_of(info.head) if info.head else None
        if message_id and await self.importer.has(job.address_id, message_id, info.size):
            return Fetched(duplicate=True)
        if info.size > self.settings.max_message_bytes:
            return Fetched(
                error=f"{folder_name} UID {info.uid}: {info.size} bytes is over the limit"
            )
        raw = await source.body(info.uid)
        if raw is None:
            return Fetched(error=f"{folder_name} UID {info.uid}: the source no longer has it")
        return Fetched(raw=raw)

    async def _message(
        self,
        job: store.Job,
        position: int,
        folder_name: str,
        target: Target,
        info: imap.MessageInfo,
        fetched: Fetched,
    ) -> None:
        error = fetched.error

        async def checkpoint(conn: Conn, duplicate: bool) -> None:
            await store.advance(
                conn,
                job.id,
                self.worker,
                position,
                uid=info.uid,
                size=info.size,
                duplicate=duplicate,
                error=error,
                current_folder=folder_name,
                now=self.ctx.clock.now(),
            )

        if fetched.raw is None:
            async with self.ctx.db.transaction() as conn:
                await checkpoint(conn, fetched.duplicate)
            return
        # The address's quota, tightened by what the plan's storage_bytes leaves
        # the account (mail/billing/): the limit delivery and JMAP apply.
        async with self.ctx.db.connection() as conn:
            quota_bytes, _ = await directory.address_quota(conn, job.address_id)
        await self.importer.store(
            job.address_id,
            target,
            fetched.raw,
            keywords=info.keywords,
            received_at=info.internal_date or self.ctx.clock.now(),
            quota_bytes=quota_bytes,
            also=checkpoint,
        )
