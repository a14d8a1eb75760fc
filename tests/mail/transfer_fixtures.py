"""Shared pieces of the transfer tests: the Dovecot server, a destination, seeded mail."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

from common.runtime import Runtime
from gateway.app import services_key
from mail.accounts.store import Account
from tests.mail import imap_server
from tests.mail.factories import PASSWORD_HASH

SOURCE_PASSWORD = "source password 1"


def dovecot(tls: tuple[Path, Path] | None = None) -> Iterator[imap_server.ImapServer]:
    """The body of each test module's ``imap`` fixture (module scope: one server per module)."""
    if not imap_server.available():
        if os.environ.get("CI"):
            pytest.fail("CI runs the transfer tests: dovecot must be installed (make imap-server)")
        pytest.skip("dovecot is not installed (make imap-server installs it)")
    yield from imap_server.running(tls)


async def make_destination(runtime: Runtime, account: Account, local_part: str = "ann") -> str:
    """A domain of ``account`` with one address; returns the address id."""
    now = runtime.clock.now()
    domain = f"d{os.urandom(4).hex()}.example"
    domain_id = await runtime.db.fetch_val(
        "INSERT INTO mail.domains (account_id, name, created_at, updated_at)"
        " VALUES (%s, %s, %s, %s) RETURNING id::text",
        (account.id, domain, now, now),
    )
    return str(
        await runtime.db.fetch_val(
            "INSERT INTO mail.addresses (domain_id, local_part, password_hash, created_at,"
            " updated_at) VALUES (%s, %s, %s, %s, %s) RETURNING id::text",
            (domain_id, local_part, PASSWORD_HASH, now, now),
        )
    )


def message(subject: str, *, body: str = "hello", attachment: bytes | None = None) -> bytes:
    msg = EmailMessage()
    msg["From"] = "Someone <someone@source.example>"
    msg["To"] = "ann@source.example"
    msg["Subject"] = subject
    msg["Message-ID"] = f"<{subject.replace(' ', '.')}.{os.urandom(3).hex()}@source.example>"
    msg["Date"] = "Thu, 04 Mar 2021 10:00:00 +0000"
    msg.set_content(body)
    if attachment is not None:
        msg.add_attachment(
            attachment, maintype="application", subtype="octet-stream", filename="big.bin"
        )
    return msg.as_bytes().replace(b"\n", b"\r\n").replace(b"\r\r\n", b"\r\n")


def seed_bulk(server: imap_server.ImapServer, user: str, count: int, size: int = 2000) -> None:
    """``count`` messages in INBOX over one connection."""
    server.add_user(user, SOURCE_PASSWORD)
    client = server.connect(user)
    try:
        for n in range(count):
            server.append(user, "INBOX", message(f"bulk {n}", body="x" * size), client=client)
    finally:
        client.logout()


def start_body(address_id: str, server: imap_server.ImapServer, user: str, **extra: Any) -> dict:
    return {
        "address_id": address_id,
        "host": server.host,
        "port": server.port,
        "tls": "none",
        "username": user,
        "password": SOURCE_PASSWORD,
        **extra,
    }


async def poll(client: Any, headers: dict[str, str], transfer_id: str, until: Any) -> dict:
    """GET the transfer until ``until(body)`` holds (10 s at most)."""
    deadline = asyncio.get_running_loop().time() + 10
    while True:
        body = await (await client.get(f"/api/transfers/{transfer_id}", headers=headers)).json()
        if until(body):
            return body
        assert asyncio.get_running_loop().time() < deadline, body
        await asyncio.sleep(0.02)


INTERNAL_DATE = datetime(2021, 3, 4, 9, 30, tzinfo=UTC)
LATER = INTERNAL_DATE + timedelta(days=200)


def runner(client: Any) -> Any:
    """The gateway's transfer runner (mail/transfers/runner.py)."""
    return client.app[services_key]["mail"].transfers


async def run(client: Any, runtime: Any) -> None:
    """Run the due jobs (the kick starts the transfers) and wait until they end."""
    # make_client's gateways have their own runtime (and job queue).
    await getattr(client, "mail_runtime", runtime).jobs.run_due()
    await asyncio.wait_for(runner(client).wait_idle(), 60)


async def transfer(client: Any, runtime: Any, body: dict, headers: dict[str, str]) -> dict:
    """Start a transfer, run it to its end, and read it."""
    resp = await client.post("/api/transfers", json=body, headers=headers)
    assert resp.status == 201, await resp.text()
    created = await resp.json()
    await run(client, runtime)
    return await (await client.get(f"/api/transfers/{created['id']}", headers=headers)).json()
