"""POP3 with real clients: poplib over STLS and POP3S, fetchmail; hostile input and limits."""

from __future__ import annotations

import asyncio
import base64
import poplib
import shutil
import socket
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from common.clock import ManualClock
from common.runtime import Runtime
from mta.settings import MtaSettings
from mta.store import emails, mailboxes
from tests.mta import sending
from tests.mta.access import Ports, access_config, client_tls, daemons
from tests.mta.conftest import send
from tests.mta.sending import Sender


def message(subject: str, body: str = "hello") -> bytes:
    return (
        f"From: Bob <bob@sender.test>\r\nTo: alice@example.test\r\nSubject: {subject}\r\n"
        f"Message-ID: <{subject.replace(' ', '.')}@sender.test>\r\n\r\n{body}\r\n"
    ).encode()


@pytest.fixture
async def alice(runtime: Runtime) -> Sender:
    return await sending.hosted_sender(runtime.db)


@pytest.fixture
def config(mta_config: MtaSettings) -> MtaSettings:
    return access_config(
        mta_config,
        access_soft_error_limit=2,
        access_hard_error_limit=4,
        submission_auth_failures=3,
    )


@pytest.fixture
async def ports(runtime: Runtime, config: MtaSettings) -> AsyncIterator[Ports]:
    async with daemons(runtime, config) as found:
        yield found


async def inbox(runtime: Runtime, alice: Sender) -> list[Any]:
    async with runtime.db.connection() as conn:
        box = await mailboxes.with_role(conn, alice.address_id, "inbox")
        assert box is not None
        return await emails.oldest_first(conn, box)


async def stored(runtime: Runtime, blob_id: str) -> bytes:
    from mta.store.raw import RawMessages

    blobs = RawMessages.of(runtime)
    return b"".join([c async for c in blobs.open(blob_id)])


def walk(port: int, alice: Sender) -> dict[str, Any]:
    out: dict[str, Any] = {}
    client = poplib.POP3("127.0.0.1", port, timeout=10)
    out["capa_plain"] = client.capa()
    try:
        client.user(alice.email)
    except poplib.error_proto as exc:
        out["user_before_tls"] = exc.args[0]
    client.stls(context=client_tls())
    out["capa_tls"] = client.capa()
    client.user(alice.email)
    out["pass"] = client.pass_(alice.password)
    out["stat"] = client.stat()
    out["list"] = client.list()[1]
    out["uidl"] = client.uidl()[1]
    out["retr"] = client.retr(1)[1]
    out["top"] = client.top(2, 1)[1]
    out["dele"] = client.dele(1)
    out["stat_after_dele"] = client.stat()
    try:
        client.retr(1)
    except poplib.error_proto as exc:
        out["retr_deleted"] = exc.args[0]
    out["quit"] = client.quit()
    return out


async def test_poplib_walk_over_stls_and_dele_quit_is_seen_by_jmap(
    runtime: Runtime,
    ports: Ports,
    smtp_port: int,
    alice: Sender,
    gateway_client: Any,
    clock: ManualClock,
) -> None:
    first = message("first", "line one\r\n.starts with a dot\r\nline three")
    for raw in (first, message("second", "a\r\nb\r\nc"), message("third")):
        result = await send(smtp_port, "bob@sender.test", [alice.email], raw)
        assert result["data"][0] == 250
        clock.advance(1)  # numbered by arrival
    listed = await inbox(runtime, alice)
    assert len(listed) == 3
    before = await jmap(
        gateway_client, alice, [["Email/get", {"accountId": alice.address_id, "ids": []}, "g"]]
    )
    state = before["g"]["state"]

    out = await asyncio.to_thread(walk, ports.pop3, alice)

    # Before TLS, no plaintext sign-in is offered or accepted (not loopback-allowed here).
    assert "STLS" in out["capa_plain"] and "USER" not in out["capa_plain"]
    assert out["user_before_tls"].startswith(b"-ERR [AUTH]")
    assert {"USER", "SASL", "TOP", "UIDL", "RESP-CODES", "PIPELINING"} <= set(out["capa_tls"])
    assert out["capa_tls"]["SASL"] == ["PLAIN"] and "STLS" not in out["capa_tls"]
    total = sum(m.size for m in listed)
    assert out["pass"] == f"+OK maildrop has 3 messages ({total} octets)".encode()
    assert out["stat"] == (3, total)
    assert out["list"] == [f"{n} {m.size}".encode() for n, m in enumerate(listed, 1)]
    # The unique id is the email id (the JMAP id): stable across sessions.
    assert out["uidl"] == [f"{n} {m.id}".encode() for n, m in enumerate(listed, 1)]
    raw = await stored(runtime, listed[0].blob_id)
    assert b"\r\n".join(out["retr"]) + b"\r\n" == raw  # poplib undoes the dot-stuffing
    assert b".starts with a dot" in raw
    top = out["top"]
    assert top[-2:] == [b"", b"a"] and b"Subject: second" in top
    assert out["dele"].startswith(b"+OK")
    assert out["stat_after_dele"] == (2, total - listed[0].size)
    assert out["retr_deleted"] == b"-ERR message 1 already deleted"
    assert out["quit"] == b"+OK bye (1 messages removed)"

    # JMAP sees the expunge: the email is gone, and Email/changes says destroyed.
    after = await jmap(
        gateway_client,
        alice,
        [
            ["Email/query", {"accountId": alice.address_id}, "q"],
            ["Email/changes", {"accountId": alice.address_id, "sinceState": state}, "c"],
        ],
    )
    assert set(after["q"]["ids"]) == {listed[1].id, listed[2].id}
    assert after["c"]["destroyed"] == [listed[0].id]


async def jmap(client: Any, alice: Sender, calls: list[Any]) -> dict[str, Any]:
    auth = "Basic " + base64.b64encode(f"{alice.email}:{alice.password}".encode()).decode()
    resp = await client.post(
        "/jmap",
        json={
            "using": ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail"],
            "methodCalls": calls,
        },
        headers={"Authorization": auth},
    )
    assert resp.status == 200, await resp.text()
    return {tag: args for _, args, tag in (await resp.json())["methodResponses"]}


def implicit_tls_session(port: int, commands: list[bytes]) -> list[bytes]:
    client = poplib.POP3_SSL("127.0.0.1", port, timeout=10, context=client_tls())
    answers = []
    for command in commands:
        try:
            answers.append(client._shortcmd(command.decode()))  # type: ignore[attr-defined]
        except poplib.error_proto as exc:
            answers.append(exc.args[0])
    client.close()
    return answers


def plain(login: str, password: str) -> bytes:
    return b"AUTH PLAIN " + base64.b64encode(f"\0{login}\0{password}".encode())


async def test_pop3s_auth_plain_and_identical_answers_for_unknown_and_wrong(
    runtime: Runtime, ports: Ports, alice: Sender
) -> None:
    answers = await asyncio.to_thread(
        implicit_tls_session,
        ports.pop3s,
        [
            plain(alice.email, "wrong password"),
            plain("nobody@example.test", "wrong password"),
            plain(alice.email, alice.password),
            b"STAT",
        ],
    )
    assert answers[0] == answers[1] == b"-ERR [AUTH] invalid user name or password"
    assert answers[2] == b"+OK maildrop has 0 messages (0 octets)"
    assert answers[3] == b"+OK 0 0"


async def test_failed_logins_spend_the_shared_budget(
    runtime: Runtime, ports: Ports, alice: Sender
) -> None:
    # SUBMISSION_AUTH_FAILURES (3 here) per client address,
    # counted across sessions: then even the right password is refused, unchecked.
    wrong = [plain(alice.email, f"guess {n}") for n in range(3)]
    first = await asyncio.to_thread(implicit_tls_session, ports.pop3s, wrong[:2])
    last = await asyncio.to_thread(
        implicit_tls_session, ports.pop3s, [wrong[2], plain(alice.email, alice.password)]
    )
    assert set(first) | {last[0]} == {b"-ERR [AUTH] invalid user name or password"}
    assert last[1] == b"-ERR [SYS/TEMP] too many failed sign-ins; try again later"


def raw_session(port: int, lines: list[bytes]) -> bytes:
    """Send raw lines, then read until the server closes; everything it said."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.recv(1024)
        for line in lines:
            sock.sendall(line)
        chunks = []
        while data := sock.recv(65536):
            chunks.append(data)
    return b"".join(chunks)


async def test_hostile_input_gets_errors_then_a_close(ports: Ports) -> None:
    said = await asyncio.to_thread(
        raw_session,
        ports.pop3,
        [b"STAT\r\n", b"US\x00ER x\r\n", b"FROB\r\n", b"RETR 1\r\n", b"NOOP\r\n"],
    )
    assert said.split(b"\r\n")[:5] == [
        b"-ERR sign in first",
        b"-ERR NUL bytes are not allowed",
        b"-ERR unknown command",
        b"-ERR sign in first",
        b"-ERR [SYS/TEMP] too many errors; closing",
    ]
    long_line = await asyncio.to_thread(raw_session, ports.pop3, [b"USER " + b"a" * 12_000])
    assert long_line == b"-ERR line too long\r\n"
    # A command sent with STLS would be read as if under TLS (CVE-2011-0411): dropped.
    injected = await asyncio.to_thread(raw_session, ports.pop3, [b"STLS\r\nUSER x\r\n"])
    assert injected == b""


@pytest.mark.parametrize(
    ("max_total", "max_per_ip", "opened"),
    [(500, 20, 100), (900, 2000, 1000)],
    ids=["per-client-address", "per-process"],
)
async def test_connection_caps_per_process_and_per_client_address(
    runtime: Runtime,
    mta_config: MtaSettings,
    alice: Sender,
    max_total: int,
    max_per_ip: int,
    opened: int,
) -> None:
    """Idle connections past a cap are refused at once, and their slots come back
    when the held ones end: a legitimate client then signs in."""
    config = access_config(
        mta_config, access_max_connections=max_total, access_max_connections_per_ip=max_per_ip
    )
    held_count = min(max_total, max_per_ip)
    async with daemons(runtime, config) as ports:
        held = []
        refused = 0
        for _ in range(opened):
            reader, writer = await asyncio.open_connection("127.0.0.1", ports.pop3)
            greeting = await reader.readline()
            if greeting.startswith(b"-ERR [SYS/TEMP] too many connections"):
                refused += 1
                assert await reader.read() == b""
                writer.close()
            else:
                held.append((reader, writer))
        assert (len(held), refused) == (held_count, opened - held_count)
        # The server frees a slot before it closes: once the client reads the end,
        # the slot is free again.
        for _, w in held:
            w.write(b"QUIT\r\n")
        ends = await asyncio.gather(*(r.read() for r, _ in held))
        assert set(ends) == {b"+OK bye\r\n"}
        for _, w in held:
            w.close()
        # A legitimate client signs in.
        answers = await asyncio.to_thread(
            implicit_tls_session, ports.pop3s, [plain(alice.email, alice.password)]
        )
        assert answers == [b"+OK maildrop has 0 messages (0 octets)"]


async def test_silence_before_sign_in_ends_at_the_login_timeout(
    runtime: Runtime, mta_config: MtaSettings
) -> None:
    async with daemons(runtime, access_config(mta_config, pop3_login_timeout=1)) as ports:
        reader, writer = await asyncio.open_connection("127.0.0.1", ports.pop3)
        assert await reader.readline() == b"+OK POP3 server ready\r\n"
        assert await reader.read() == b"-ERR autologout; idle for too long\r\n"
        writer.close()


@pytest.mark.skipif(shutil.which("fetchmail") is None, reason="fetchmail is not installed")
async def test_fetchmail_fetches_and_deletes_over_stls(
    runtime: Runtime, ports: Ports, smtp_port: int, alice: Sender, tmp_path: Path
) -> None:
    for subject in ("one", "two"):
        await send(smtp_port, "bob@sender.test", [alice.email], message(subject))
    listed = await inbox(runtime, alice)
    originals = [await stored(runtime, m.blob_id) for m in listed]
    out = tmp_path / "mail"
    out.mkdir()
    rc = tmp_path / "fetchmailrc"
    rc.write_text(
        # STLS required (sslproto without ssl: upgrade the plaintext port, RFC 2595).
        f"poll 127.0.0.1 protocol pop3 port {ports.pop3} uidl\n"
        f'  user "{alice.email}" password "{alice.password}" sslproto tls1.2+ no sslcertck\n'
        # One file per message: mktemp names it.
        f"  mda \"sh -c 'cat > $(mktemp {out}/msg.XXXXXX)'\"\n"
    )
    rc.chmod(0o600)
    proc = await asyncio.to_thread(
        subprocess.run,
        ["fetchmail", "-f", str(rc), "--nosyslog", "-v", "--idfile", str(tmp_path / "ids")],
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fetched = sorted(p.read_bytes() for p in out.iterdir())
    assert len(fetched) == 2
    # fetchmail adds its Received line and writes LF line ends: the rest is the message.
    for original in originals:
        body = original.replace(b"\r\n", b"\n")
        assert any(f.endswith(body) for f in fetched)
    assert await inbox(runtime, alice) == []
