"""Who signs in to the protocol servers: SMTP submission, JMAP, and what comes next."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from common.clock import Clock
from common.db import Conn, fetch_all, fetch_one
from common.passwords import verify_password


@dataclass(frozen=True)
class Principal:
    """An address that proved its password: who submits, or who opens a JMAP session."""

    address_id: str
    account_id: str
    email: str
    display_name: str = ""


async def authenticate(
    conn: Conn, email: str, password: str, *, proven: ProvenSignIns | None = None
) -> Principal | None:
    """The address ``email`` if ``password`` is its password; None otherwise.

    A login names its mailbox exactly: no +tag, no fallback domain. An unknown
    address costs the same hash work as a wrong password (no user probing).
    With ``proven``, a password proven for this address lately, whose stored
    hash has not changed since, is taken without hashing it again.
    """
    local, _, domain = email.strip().lower().rpartition("@")
    row = (
        await fetch_one(
            conn,
            """
            SELECT a.id::text, d.account_id::text, a.password_hash, a.display_name
              FROM mail.addresses a JOIN mail.domains d ON d.id = a.domain_id
             WHERE d.name = %s AND a.local_part = %s
            """,
            (domain, local),
        )
        if local
        else None
    )
    stored = row["password_hash"] if row else None
    login = f"{local}@{domain}"
    if row is None or not stored:
        await verify_password(None, password)  # the same work as a wrong password
        return None
    if proven is None or not proven.holds(login, password, stored):
        if not await verify_password(stored, password):
            return None
        if proven is not None:
            proven.remember(login, password, stored)
    return Principal(
        address_id=row["id"],
        account_id=row["account_id"],
        email=login,
        display_name=row["display_name"] or "",
    )


class ProvenSignIns:
    """Passwords proven lately, so a mail app's next sign-in skips the hash.

    A mail app signs in on every connection: Thunderbird opens several at once,
    phones reconnect every few minutes, a script submits each message on a new
    session. Each check is argon2id (tens to hundreds of milliseconds of CPU),
    so they are remembered after they succeed, as Dovecot's auth cache and
    saslauthd's credential cache do:

    * only successes, for ``seconds`` (AUTH_CACHE_SECONDS; 0 turns it off);
      a wrong password is hashed every time and spends the sign-in budgets;
    * keyed by HMAC-SHA256 of the login and the password under a key made at
      start and never written anywhere, never by the password itself;
    * valid only while the address's stored hash is the one it was proven
      against: a password change (or reset) ends it at once, and an address
      removed finds no row at all;
    * concurrent checks of the same login and password share one hash
      (:meth:`once`): a client opening five connections pays once.

    One per process (mta/context.py): each daemon process keeps its own.
    """

    def __init__(self, clock: Clock, seconds: float, max_entries: int = 10_000) -> None:
        self.clock = clock
        self.seconds = seconds
        self.max_entries = max_entries
        self._key = secrets.token_bytes(32)
        self._proven: dict[bytes, tuple[str, float]] = {}
        self._checking: dict[bytes, asyncio.Future[Principal | None]] = {}

    def _digest(self, login: str, password: str) -> bytes:
        message = f"{login.strip().lower()}\0{password}".encode("utf-8", "surrogatepass")
        return hmac.new(self._key, message, hashlib.sha256).digest()

    def holds(self, login: str, password: str, stored_hash: str) -> bool:
        entry = self._proven.get(self._digest(login, password))
        if entry is None:
            return False
        proven_hash, until = entry
        return until > self.clock.timestamp() and hmac.compare_digest(proven_hash, stored_hash)

    def remember(self, login: str, password: str, stored_hash: str) -> None:
        if self.seconds <= 0:
            return
        if len(self._proven) >= self.max_entries:
            now = self.clock.timestamp()
            self._proven = {k: v for k, v in self._proven.items() if v[1] > now}
            if len(self._proven) >= self.max_entries:
                self._proven.clear()
        self._proven[self._digest(login, password)] = (
            stored_hash,
            self.clock.timestamp() + self.seconds,
        )

    async def once(
        self, login: str, password: str, check: Callable[[], Awaitable[Principal | None]]
    ) -> Principal | None:
        """``check()``, or the answer of the same check already running. A check
        whose own connection was cancelled (the client went away) answers no one:
        the sign-ins waiting on it run their own."""
        key = self._digest(login, password)
        while (running := self._checking.get(key)) is not None:
            await asyncio.wait({running})
            if not running.cancelled():
                return running.result()
        future: asyncio.Future[Principal | None] = asyncio.get_running_loop().create_future()
        self._checking[key] = future
        try:
            result = await check()
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: a waiter may not exist
            raise
        else:
            future.set_result(result)
            return result
        finally:
            del self._checking[key]


async def account_addresses(conn: Conn, account_number: int) -> list[Principal]:
    """Every address the panel account numbered ``account_number`` owns (OAuth ``sub``),
    oldest first. JMAP gives each as its own account to a Bearer token of that
    panel account."""
    rows = await fetch_all(
        conn,
        """
        SELECT a.id::text AS address_id, d.account_id::text AS account_id,
               a.local_part || '@' || d.name AS email, a.display_name
          FROM mail.addresses a
          JOIN mail.domains d ON d.id = a.domain_id
          JOIN mail.accounts acc ON acc.id = d.account_id
         WHERE acc.number = %s ORDER BY a.created_at, d.name, a.local_part
        """,
        (account_number,),
    )
    return [Principal(**row) for row in rows]
