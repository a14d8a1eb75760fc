"""ManageSieve with a scripted client (RFC 5804): scripts are the panel's filters, and a
script put here files mail arriving over SMTP; hostile input and the sign-in rules."""

from __future__ import annotations

import asyncio
import base64
import os
import re
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from common.passwords import hash_password
from common.runtime import Runtime
from mta.settings import MtaSettings
from mta.store import emails
from tests.mail.factories import signed_in
from tests.mta import factories
from tests.mta.access import Ports, access_config, client_tls, daemons
from tests.mta.conftest import send

PASSWORD = "correct horse battery staple"
SCRIPT = (
    'require ["fileinto", "mailbox"];\r\n'
    'if header :contains "subject" "invoice" {\r\n'
    '  fileinto :create "Invoices";\r\n'
    "}\r\n"
)


@pytest.fixture
def config(mta_config: MtaSettings) -> MtaSettings:
    return access_config(mta_config, access_soft_error_limit=2, access_hard_error_limit=4)


@pytest.fixture
async def ports(runtime: Runtime, config: MtaSettings) -> AsyncIterator[Ports]:
    async with daemons(runtime, config) as found:
        yield found


@pytest.fixture
async def owner(runtime: Runtime) -> dict[str, Any]:
    """A signed-in panel account owning alice@example.test, which has a password."""
    account, headers = await signed_in(runtime)
    domain_id = await factories.domain(runtime.db, account.id, "example.test")
    address_id = await factories.address(runtime.db, domain_id, "alice")
    await runtime.db.execute(
        "UPDATE mail.addresses SET password_hash = %s WHERE id = %s",
        (await hash_password(PASSWORD), address_id),
    )
    return {"headers": headers, "address_id": address_id, "email": "alice@example.test"}


class Client:
    """A ManageSieve client as RFC 5804 describes one: responses are read to OK/NO/BYE."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def connect(cls, port: int) -> tuple[Client, list[bytes]]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        client = cls(reader, writer)
        return client, await client.response()

    async def response(self) -> list[bytes]:
        """The lines up to and including the OK/NO/BYE one; literals joined in."""
        lines: list[bytes] = []
        while True:
            line = await asyncio.wait_for(self.reader.readline(), 10)
            if not line:
                return lines
            literal = re.search(rb"\{(\d+)\}\r\n$", line)
            if literal:
                data = await self.reader.readexactly(int(literal.group(1)))
                rest = await self.reader.readline()
                line = line[: literal.start()] + data + rest
            lines.append(line.removesuffix(b"\r\n"))
            if re.match(rb"(OK|NO|BYE)\b", line):
                return lines

    async def send(self, line: bytes) -> list[bytes]:
        self.writer.write(line + b"\r\n")
        return await self.response()

    async def starttls(self) -> list[bytes]:
        assert (await self.send(b"STARTTLS"))[-1].startswith(b"OK")
        await self.writer.start_tls(client_tls())
        return await self.response()

    async def login(self, email: str, password: str = PASSWORD) -> list[bytes]:
        token = base64.b64encode(f"\0{email}\0{password}".encode())
        return await self.send(b'AUTHENTICATE "PLAIN" "' + token + b'"')

    async def put(self, name: str, script: str) -> list[bytes]:
        raw = script.encode()
        return await self.send(b'PUTSCRIPT "' + name.encode() + b'" {%d+}\r\n' % len(raw) + raw)

    async def close(self) -> None:
        self.writer.close()


async def test_a_script_put_over_managesieve_files_smtp_mail_and_is_a_panel_filter(
    runtime: Runtime,
    ports: Ports,
    smtp_port: int,
    owner: dict[str, Any],
    gateway_client: Any,
) -> None:
    client, greeting = await Client.connect(ports.sieve)
    assert b'"STARTTLS"' in greeting and b'"SASL" ""' in greeting
    assert b'"SIEVE" "body copy envelope fileinto imap4flags mailbox"' in greeting
    # Before TLS: no sign-in, and no script commands before one.
    assert (await client.login(owner["email"]))[-1].startswith(b"NO (ENCRYPT-NEEDED)")
    assert (await client.send(b"LISTSCRIPTS"))[-1] == b'NO "authenticate first"'
    caps = await client.starttls()
    assert b'"SASL" "PLAIN"' in caps and b'"STARTTLS"' not in caps
    assert (await client.login(owner["email"], "wrong"))[-1] == b'NO "Authentication failed"'
    assert (await client.login(owner["email"]))[-1] == b'OK "authenticated"'

    assert (await client.send(b'HAVESPACE "invoices" 500'))[-1] == b"OK"
    assert (await client.send(b'HAVESPACE "invoices" 99999999'))[-1].startswith(
        b"NO (QUOTA/MAXSIZE)"
    )
    # The panel's compiler, with its line numbers.
    bad = await client.put("broken", 'require "fileinto";\r\nif true {\r\n  fileinto;\r\n}\r\n')
    assert bad[-1].startswith(b'NO "line 3:')
    assert (await client.send(b"CHECKSCRIPT {9+}\r\nvacation;"))[-1].startswith(b'NO "line 1:')
    assert (await client.put("invoices", SCRIPT))[-1] == b"OK"
    assert await client.send(b"LISTSCRIPTS") == [b'"invoices"', b"OK"]  # put, not active
    assert (await client.send(b'SETACTIVE "invoices"'))[-1] == b"OK"
    assert await client.send(b"LISTSCRIPTS") == [b'"invoices" ACTIVE', b"OK"]
    got = await client.send(b'GETSCRIPT "invoices"')
    assert got == [SCRIPT.encode(), b"OK"]
    assert (await client.send(b'DELETESCRIPT "invoices"'))[-1].startswith(b"NO (ACTIVE)")
    assert (await client.send(b'GETSCRIPT "nope"'))[-1].startswith(b"NO (NONEXISTENT)")
    assert (await client.send(b'NOOP "t1"'))[-1] == b'OK (TAG "t1") "done"'
    assert (await client.send(b"LOGOUT"))[-1].startswith(b"OK")
    await client.close()

    # The panel lists it as a filter of the address, enabled.
    resp = await gateway_client.get(
        f"/api/filters?address_id={owner['address_id']}", headers=owner["headers"]
    )
    [listed] = (await resp.json())["data"]
    assert (listed["name"], listed["enabled"], listed["script"]) == ("invoices", True, SCRIPT)

    # And mail arriving over SMTP is filed by it.
    for subject in ("Your invoice 42", "Lunch"):
        raw = (
            f"From: bob@sender.test\r\nTo: alice@example.test\r\nSubject: {subject}\r\n\r\nhi\r\n"
        ).encode()
        result = await send(smtp_port, "bob@sender.test", [owner["email"]], raw)
        assert result["data"][0] == 250
    async with runtime.db.connection() as conn:
        folders = {
            r["subject"]: r["folders"] for r in await emails.for_address(conn, owner["address_id"])
        }
    assert folders == {"Your invoice 42": ["Invoices"], "Lunch": ["Inbox"]}


async def test_setactive_rename_and_delete_map_onto_filters(
    runtime: Runtime, ports: Ports, owner: dict[str, Any], gateway_client: Any
) -> None:
    client, _ = await Client.connect(ports.sieve)
    await client.starttls()
    await client.login(owner["email"])
    for name in ("a", "b"):
        assert (await client.put(name, "keep;\r\n"))[-1] == b"OK"
    assert (await client.send(b'SETACTIVE "a"'))[-1] == b"OK"
    assert (await client.send(b'SETACTIVE "b"'))[-1] == b"OK"  # a is switched off
    assert (await client.send(b'RENAMESCRIPT "a" "b"'))[-1].startswith(b"NO (ALREADYEXISTS)")
    assert (await client.send(b'RENAMESCRIPT "a" "c"'))[-1] == b"OK"
    assert await client.send(b"LISTSCRIPTS") == [b'"c"', b'"b" ACTIVE', b"OK"]
    assert (await client.send(b'DELETESCRIPT "c"'))[-1] == b"OK"
    assert (await client.send(b'SETACTIVE ""'))[-1] == b"OK"
    assert await client.send(b"LISTSCRIPTS") == [b'"b"', b"OK"]
    assert (await client.send(b"UNAUTHENTICATE"))[-1] == b"OK"
    assert (await client.send(b"LISTSCRIPTS"))[-1] == b'NO "authenticate first"'
    await client.close()
    resp = await gateway_client.get(
        f"/api/filters?address_id={owner['address_id']}", headers=owner["headers"]
    )
    assert [(f["name"], f["enabled"]) for f in (await resp.json())["data"]] == [("b", False)]


async def test_hostile_input_gets_no_then_bye(ports: Ports, owner: dict[str, Any]) -> None:
    client, _ = await Client.connect(ports.sieve)
    assert (await client.send(b'PUTSCRIPT "x" {5+}\r\nkeep;'))[-1] == b'NO "authenticate first"'
    assert (await client.send(b"CAPA\x00BILITY"))[-1] == b'NO "NUL bytes are not allowed"'
    assert (await client.send(b"FROBNICATE"))[-1] == b'NO "unknown command"'
    assert await client.send(b'"unterminated') == [b'NO "unterminated string"']
    assert await client.response() == [b'BYE "too many errors"']
    assert await client.reader.read() == b""

    client, _ = await Client.connect(ports.sieve)
    assert await client.send(b'PUTSCRIPT "x" {99999999+}') == [
        b'BYE (QUOTA/MAXSIZE) "literal too large"'
    ]
    # Literals each under the limit may not add up without end in one command.
    client, _ = await Client.connect(ports.sieve)
    # (The second one's bytes are not sent: refused at its announcement, unread.)
    first = b"NOOP {60000+}\r\n" + b"x" * 60000
    assert await client.send(first + b" {60000+}") == [b'BYE (QUOTA/MAXSIZE) "literal too large"']
    client, _ = await Client.connect(ports.sieve)
    assert await client.send(b"NOOP " + b"x" * 12_000) == [b'BYE "line too long"']


async def test_idle_before_sign_in_and_a_literal_that_never_ends_are_closed(
    runtime: Runtime, mta_config: MtaSettings
) -> None:
    async with daemons(runtime, access_config(mta_config, sieve_login_timeout=1)) as ports:
        client, _ = await Client.connect(ports.sieve)
        assert await client.response() == [b'BYE "idle for too long"']
        # A literal that never ends is read within the same deadline.
        client, _ = await Client.connect(ports.sieve)
        assert await client.send(b'PUTSCRIPT "x" {100+}\r\nkeep;') == [b'BYE "idle for too long"']


def sieve_connect(port: int, email: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Debian's sieve-connect, the password on a file descriptor as it asks."""
    read, write = os.pipe()
    os.write(write, PASSWORD.encode() + b"\n")
    os.close(write)
    try:
        return subprocess.run(
            [
                *("sieve-connect", "--server", "127.0.0.1", "--port", str(port), "--user", email),
                *("--passwordfd", str(read), "--notlsverify", "--authmech", "PLAIN", *args),
            ],
            pass_fds=(read,),
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        os.close(read)


@pytest.mark.skipif(shutil.which("sieve-connect") is None, reason="sieve-connect is not installed")
async def test_sieve_connect_uploads_and_activates_a_script_that_files_smtp_mail(
    runtime: Runtime, ports: Ports, smtp_port: int, owner: dict[str, Any], tmp_path: Path
) -> None:
    local = tmp_path / "invoices.sieve"
    local.write_text(SCRIPT)
    email = owner["email"]
    for args in (
        ("--upload", "--localsieve", str(local), "--remotesieve", "invoices"),
        ("--activate", "--remotesieve", "invoices"),
    ):
        done = await asyncio.to_thread(sieve_connect, ports.sieve, email, *args)
        assert done.returncode == 0, done.stdout + done.stderr
    listed = await asyncio.to_thread(sieve_connect, ports.sieve, email, "--list")
    # sieve-connect prints the server's LISTSCRIPTS lines as they come.
    assert listed.stdout.strip() == '"invoices" ACTIVE', listed.stdout + listed.stderr
    raw = b"From: bob@sender.test\r\nTo: alice@example.test\r\nSubject: invoice 7\r\n\r\nhi\r\n"
    assert (await send(smtp_port, "bob@sender.test", [email], raw))["data"][0] == 250
    async with runtime.db.connection() as conn:
        [row] = await emails.for_address(conn, owner["address_id"])
    assert row["folders"] == ["Invoices"]
