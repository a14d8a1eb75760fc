"""``make password``: set a person's password from the host; no argument lists accounts.

    python -m content.password              # list accounts
    python -m content.password EMAIL        # prompt for a new password and set it

The way back in when the only owner is locked out. It reaches the database
the gateway uses: DATABASE_URL, or the embedded server under DATA_DIR. The
password is read from the terminal (asked twice), or one line from standard
input when that is not a terminal. Setting it signs that person out
everywhere; their agent keys keep working.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import sys
from collections.abc import Callable, Sequence

from common.clock import Clock
from common.db import Database
from common.embedded_pg import EmbeddedPostgres
from common.migrations import migrate
from common.passwords import hash_password
from common.settings import Settings, SettingsError, load_settings
from content.auth.principal import Actor
from content.auth.store import revoke_user_sessions
from content.errors import Problems, ValidationFailed
from content.people import store
from content.people.service import clean_password
from content.service import MIGRATIONS
from content.writes import write_on


class PasswordError(Exception):
    """The command cannot go on; the message is one line for the operator."""


def read_password(email: str) -> str:
    if not sys.stdin.isatty():
        return sys.stdin.readline().rstrip("\r\n")
    first = getpass.getpass(f"New password for {email}: ")
    if getpass.getpass("Again: ") != first:
        raise PasswordError("the two passwords differ; nothing changed")
    return first


async def list_accounts(db: Database) -> str:
    async with db.connection() as conn:
        rows = await store.all_accounts(conn)
    if not rows:
        return "no accounts yet; the first visit to the admin claims the site"
    width = max(len(r.email) for r in rows)
    lines = [f"{'EMAIL'.ljust(width)}  {'ROLE':<7} NAME"]
    lines += [f"{r.email.ljust(width)}  {r.role:<7} {r.name}" for r in rows]
    return "\n".join(lines)


async def set_password(db: Database, clock: Clock, email: str, password: str) -> str:
    problems = Problems()
    clean_password(problems, password)
    try:
        problems.raise_if_any()
    except ValidationFailed as exc:
        raise PasswordError(f"password {exc.fields[0].message}") from None
    async with db.connection() as conn:
        login = await store.get_login(conn, email)
    if login is None:
        raise PasswordError(f"no account {email}; run without an email to list accounts")
    user = login.person
    password_hash = await hash_password(password)
    async with write_on(db, clock.now()) as tx:
        await store.update_user(tx.conn, user.id, {"password_hash": password_hash}, tx.now)
        ended = await revoke_user_sessions(tx.conn, user.id, tx.now)
        operator = Actor(kind="system", name="make password")
        await tx.record(operator, "user.updated", "user", user.id, {"password": "changed"})
    return f"password set for {user.email} ({user.role}); {ended} session(s) signed out"


async def run(
    settings: Settings, email: str | None, ask: Callable[[str], str] = read_password
) -> str:
    pg: EmbeddedPostgres | None = None
    dsn = settings.database_url
    if dsn is None:
        pg = EmbeddedPostgres(settings.pgdata_dir)
        await asyncio.to_thread(pg.start)
        dsn = await asyncio.to_thread(pg.ensure_database)
    db = await Database.connect(dsn, size=1)
    try:
        # A database the gateway never started still gets the CMS tables.
        await migrate(db, [MIGRATIONS])
        if email is None:
            return await list_accounts(db)
        return await set_password(db, Clock(), email, ask(email))
    finally:
        await db.close()
        if pg is not None:
            await asyncio.to_thread(pg.stop)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make password", description=__doc__.split("\n")[0])
    parser.add_argument("email", nargs="?", help="the account; leave out to list accounts")
    args = parser.parse_args(argv)
    try:
        print(asyncio.run(run(load_settings(), args.email)))
    except (SettingsError, PasswordError) as exc:
        print(f"make password: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
