"""Mail delivered over SMTP, read over IMAP: bytes, BODYSTRUCTURE, IDLE, isolation, restart."""

from __future__ import annotations

import asyncio
import re
from email.message import EmailMessage

import aioimaplib
import pytest

from mta.context import MtaContext
from mta.imap import server as imap_server
from tests.mta.conftest import smtplib_send
from tests.mta.imap.conftest import Imap, Mailbox, client_tls, run
from tests.mta.imap.shared import module_alice, module_bob, module_imap, module_smtp  # noqa: F401

# One IMAP and one SMTP daemon for the module; each test has mailboxes of its own.
pytestmark = pytest.mark.asyncio(loop_scope="module")


def multipart() -> bytes:
    msg = EmailMessage()
    msg["From"] = "Carol <carol@remote.test>"
    msg["To"] = "alice@example.test"
    msg["Subject"] = "The report"
    msg["Message-ID"] = "<report@remote.test>"
    msg.set_content("The report is attached.\n")
    msg.add_attachment(
        b"%PDF-1.4 binary\x00\xff", maintype="application", subtype="pdf", filename="r.pdf"
    )
    return msg.as_bytes().replace(b"\n", b"\r\n")


async def _deliver(port: int, to: str, raw: bytes) -> None:
    result = await run(smtplib_send, port, "carol@remote.test", [to], raw)
    assert result["refused"] == {}, result


async def test_a_delivered_multipart_is_fetched_byte_for_byte_with_its_bodystructure(
    imap: Imap, smtp: int, alice: Mailbox
) -> None:
    raw = multipart()
    await _deliver(smtp, alice.email, raw)

    def read() -> tuple[bytes, bytes, bytes]:
        c = imap.connect(alice)
        c.select("INBOX", readonly=True)
        _, whole = c.fetch("1", "(BODY.PEEK[] BODYSTRUCTURE)")
        _, part = c.fetch("1", "(BODY.PEEK[2] BODY.PEEK[1.MIME])")
        c.logout()
        return whole[0][1], whole[0][0] + whole[1], part[0][1]  # type: ignore[index,operator]

    stored, structure, attachment = await run(read)
    # Delivery prepends its Received trace field; the rest is the message as sent.
    assert stored.endswith(raw)
    assert stored.startswith(b"Received: ")
    assert re.search(
        rb'BODYSTRUCTURE \(\("TEXT" "PLAIN" \("CHARSET" "utf-8"\) NIL NIL "7BIT" 25 1 NIL NIL NIL NIL\)'
        rb'\("APPLICATION" "PDF" NIL NIL NIL "BASE64" \d+ NIL \("ATTACHMENT" \("FILENAME" "r.pdf"\)\) NIL NIL\)'
        rb' "MIXED" \("BOUNDARY" "[^"]+"\) NIL NIL NIL\)',
        structure,
    ), structure
    import base64

    assert base64.b64decode(attachment) == b"%PDF-1.4 binary\x00\xff"


async def test_idle_is_woken_by_mail_arriving_over_smtp(
    imap: Imap, smtp: int, alice: Mailbox
) -> None:
    client = aioimaplib.IMAP4_SSL("127.0.0.1", imap.tls_port, ssl_context=client_tls(), timeout=10)
    await client.wait_hello_from_server()
    assert (await client.login(alice.email, alice.password)).result == "OK"
    assert (await client.select("INBOX")).result == "OK"
    idle = await client.idle_start(timeout=20)
    # Whether the mail lands before or after the server enters IDLE, the
    # client hears "1 EXISTS" while idling (IDLE looks once, then waits for NOTIFY).
    await _deliver(smtp, alice.email, multipart())
    push = await client.wait_server_push(timeout=5)
    client.idle_done()
    assert (await asyncio.wait_for(idle, 5)).result == "OK"
    assert b"1 EXISTS" in push, push
    await client.logout()


async def test_one_address_never_sees_anothers_mail(
    imap: Imap, smtp: int, alice: Mailbox, bob: Mailbox
) -> None:
    await _deliver(smtp, alice.email, multipart())

    def bobs_view() -> tuple[object, object, object]:
        c = imap.connect(bob)
        sel = c.select("INBOX")
        status = c.status("INBOX", "(MESSAGES)")
        search = c.uid("SEARCH", "ALL")
        c.logout()
        return sel, status, search

    sel, status, search = await run(bobs_view)
    assert sel == ("OK", [b"0"])
    assert b"MESSAGES 0" in status[1][0]  # type: ignore[index]
    assert search == ("OK", [b""])


async def test_uids_and_uidvalidity_survive_a_restart(
    imap: Imap, smtp: int, alice: Mailbox
) -> None:
    for _ in range(3):
        await _deliver(smtp, alice.email, multipart())

    def uids(port: int) -> tuple[bytes, bytes]:
        c = imap.connect(alice) if port == imap.tls_port else None
        assert c is not None
        _, validity = c.status("INBOX", "(UIDVALIDITY UIDNEXT)")
        c.select("INBOX")
        c.store("2", "+FLAGS", "\\Deleted")
        c.expunge()
        _, found = c.uid("SEARCH", "ALL")
        c.logout()
        return validity[0], found[0]  # type: ignore[index]

    before, found = await run(uids, imap.tls_port)
    assert found == b"1 3"
    # A second server process over the same store (the first one's state gone).
    ctx = MtaContext.build(imap.ctx.runtime, imap.ctx.config)
    async with imap_server.serve(ctx) as servers:
        port = imap_server.bound_ports(servers)[1]

        def again() -> tuple[bytes, bytes]:
            c = Imap(0, port, ctx).connect(alice)
            _, validity = c.status("INBOX", "(UIDVALIDITY UIDNEXT)")
            c.select("INBOX")
            _, found = c.uid("SEARCH", "ALL")
            c.logout()
            return validity[0], found[0]  # type: ignore[index]

        await _deliver(smtp, alice.email, multipart())
        after, found_after = await run(again)
    validity_before = re.search(rb"UIDVALIDITY (\d+)", before)
    validity_after = re.search(rb"UIDVALIDITY (\d+)", after)
    assert validity_before and validity_after and validity_before[1] == validity_after[1]
    # UID 2 was expunged and is never given again: the new message is 4.
    assert found_after == b"1 3 4"
    assert b"UIDNEXT 5" in after
