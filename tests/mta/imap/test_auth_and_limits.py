"""Sign-in (LOGIN, PLAIN, OAUTHBEARER, XOAUTH2, STARTTLS) and hostile input against the daemon."""

from __future__ import annotations

import imaplib
from dataclasses import replace
from typing import Any

import pytest

from common.settings import Settings
from mta.settings import MtaSettings
from tests.mta.imap.conftest import Imap, Mailbox, Raw, client_tls, run
from tests.mta.jmap.test_auth import issue, number_of


@pytest.fixture
def imap_config(imap_config: MtaSettings) -> MtaSettings:
    return replace(
        imap_config,
        imap_literal_timeout=1,
        imap_max_line=4096,
        imap_max_connections_per_ip=4,
        imap_soft_error_limit=3,
        imap_hard_error_limit=6,
    )


async def test_plaintext_port_offers_starttls_and_refuses_login_before_it(
    imap: Imap, alice: Mailbox
) -> None:
    def walk() -> tuple[Any, Any, Any]:
        c = imaplib.IMAP4("127.0.0.1", imap.port, timeout=10)
        before = c.capabilities
        try:
            c.login(alice.email, alice.password)
            refused = None
        except imaplib.IMAP4.error as exc:
            refused = str(exc)
        c.starttls(ssl_context=client_tls())
        after = c.login(alice.email, alice.password)
        c.logout()
        return before, refused, after

    before, refused, after = await run(walk)
    assert "STARTTLS" in before and "LOGINDISABLED" in before and "AUTH=PLAIN" not in before
    assert refused is not None and "PRIVACYREQUIRED" in refused
    assert after[0] == "OK"


async def test_unknown_address_and_wrong_password_answer_alike_until_the_budget_is_spent(
    imap: Imap, alice: Mailbox
) -> None:
    def attempt(user: str, password: str) -> str:
        c = imaplib.IMAP4_SSL("127.0.0.1", imap.tls_port, ssl_context=client_tls(), timeout=10)
        try:
            c.login(user, password)
            return "OK"
        except imaplib.IMAP4.error as exc:
            return str(exc)
        finally:
            c.shutdown()

    unknown = await run(attempt, "nobody@example.test", "whatever")
    wrong = await run(attempt, alice.email, "wrong")
    assert unknown == wrong and "AUTHENTICATIONFAILED" in wrong
    for _ in range(3):
        await run(attempt, alice.email, "wrong")
    # Five failures from this address (submission's budget): even the right password waits.
    assert "UNAVAILABLE" in await run(attempt, alice.email, alice.password)


async def test_authenticate_plain_oauthbearer_and_xoauth2(
    imap: Imap, alice: Mailbox, settings: Settings, db: Any
) -> None:
    token = issue(settings, await number_of(db, alice.account_id))
    bearer = f"n,a={alice.email},\x01auth=Bearer {token}\x01\x01".encode()
    xoauth = f"user={alice.email}\x01auth=Bearer {token}\x01\x01".encode()
    plain = f"\0{alice.email}\0{alice.password}".encode()

    def sign_in(mechanism: str, message: bytes) -> str:
        c = imaplib.IMAP4_SSL("127.0.0.1", imap.tls_port, ssl_context=client_tls(), timeout=10)
        try:
            typ, _ = c.authenticate(mechanism, lambda _: message)
            typ, _data = c.select("INBOX")
            return typ
        except imaplib.IMAP4.error as exc:
            return str(exc)
        finally:
            c.shutdown()

    assert await run(sign_in, "PLAIN", plain) == "OK"
    assert await run(sign_in, "OAUTHBEARER", bearer) == "OK"
    assert await run(sign_in, "XOAUTH2", xoauth) == "OK"
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    refused = await run(sign_in, "XOAUTH2", xoauth.replace(token.encode(), forged.encode()))
    assert "AUTHENTICATIONFAILED" in refused


async def test_hostile_input_gets_bad_no_or_a_close(imap: Imap, alice: Mailbox) -> None:
    def session() -> dict[str, Any]:
        out: dict[str, Any] = {}
        r = Raw(imap.tls_port)
        r.send(b"a1 SELECT INBOX\r\n")
        out["before_auth"] = r.until(b"a1")[-1]
        r.send(b"a2 FROBNICATE\r\n")
        out["unknown"] = r.until(b"a2")[-1]
        r.send(b"a3 NOOP \x00\r\n")
        out["nul"] = r.until(b"a3")[-1]
        r.send(b"a4 LOGIN {100000}\r\n")
        out["big_literal"] = r.until(b"a4")[-1]
        r.send(b"a5 LOGIN " + b"x" * 5000 + b"\r\n")
        out["long_line"] = r.until(b"a5")[-1]
        r.close()

        r = Raw(imap.tls_port)
        r.send(b"b1 LOGIN {5}\r\n")
        out["continuation"] = r.line()
        r.send(b"al")  # and nothing more: the literal never ends
        out["stalled"] = r.until(b"b1")[-1]
        r.close()

        r = Raw(imap.tls_port)
        replies = []
        for i in range(10):
            r.send(b"c%d BOGUS\r\n" % i)
            got = r.until(b"c%d" % i)[-1]
            replies.append(got)
            if got.startswith(b"* BYE") or not got:
                break
        out["errors"] = replies
        r.close()
        return out

    out = await run(session)
    assert out["before_auth"].startswith(b"a1 BAD")
    assert out["unknown"].startswith(b"a2 BAD")
    assert out["nul"].startswith(b"a3 BAD")
    assert out["big_literal"].startswith(b"a4 NO [TOOBIG]")
    assert out["long_line"].startswith(b"* BYE [TOOBIG]")
    assert out["continuation"].startswith(b"+ ")
    assert out["stalled"].startswith(b"* BYE")
    assert out["errors"][-1].startswith(b"* BYE") and len(out["errors"]) == 6


async def test_commands_piped_behind_starttls_end_the_connection(imap: Imap) -> None:
    """A plaintext command sent before the handshake (an injection, CVE-2011-0411's
    kind) is never run in the TLS session: the connection closes."""

    def session() -> tuple[bytes, bytes]:
        import socket

        sock = socket.create_connection(("127.0.0.1", imap.port), timeout=10)
        f = sock.makefile("rb")
        f.readline()
        sock.sendall(b"a STARTTLS\r\nb LOGIN x y\r\n")
        ok = f.readline()
        rest = f.readline()
        sock.close()
        return ok, rest

    ok, rest = await run(session)
    assert ok.startswith(b"a OK")
    assert rest == b""


async def test_connections_per_client_address_are_capped(imap: Imap) -> None:
    def connect_many() -> list[bytes]:
        conns = [Raw(imap.tls_port) for _ in range(5)]
        greetings = [c.greeting for c in conns]
        for c in conns:
            c.close()
        return greetings

    greetings = await run(connect_many)
    assert all(g.startswith(b"* OK") for g in greetings[:4])
    assert greetings[4].startswith(b"* BYE [UNAVAILABLE]")
