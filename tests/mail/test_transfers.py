"""Transfers over HTTP, importing from a real Dovecot started by the test run.

Debian's Dovecot rather than the pure-Python pymap: pymap has no SPECIAL-USE
(RFC 6154), which the folder mapping is about, and Dovecot is what people
actually move their mail from. The gateway runs in-process at a ManualClock;
the test runs the job queue by hand (which starts the transfer as a task)
and waits for the runner.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import pytest

from common.settings import Settings
from mail.transfers import imap as transfer_imap
from mail.transfers.runner import SWEEP_EVERY_SECONDS
from tests.conftest import free_port
from tests.mail.conftest import HIGH_LIMITS
from tests.mail.factories import signed_in
from tests.mail.imap_server import ImapServer
from tests.mail.transfer_fixtures import (
    INTERNAL_DATE,
    LATER,
    SOURCE_PASSWORD,
    dovecot,
    make_destination,
    message,
    poll,
    run,
    runner,
    seed_bulk,
    start_body,
    transfer,
)

BIG = os.urandom(5 * 1024 * 1024)


@pytest.fixture(scope="module")
def imap() -> Iterator[ImapServer]:
    yield from dovecot()


@pytest.fixture
def settings(settings: Settings) -> Settings:
    # The source is on loopback: the SSRF guard would refuse it.
    env = {**settings.environ, "TRANSFER_ALLOW_PRIVATE": "true"}
    return replace(settings, environ=MappingProxyType(env))


def seed_mailbox(server: ImapServer, user: str) -> dict[str, bytes]:
    server.add_user(user, SOURCE_PASSWORD)
    mail = {
        "seen flagged": message("seen flagged"),
        "answered": message("answered"),
        "plain": message("plain"),
        "sent one": message("sent one"),
        "a draft": message("a draft"),
        "trashed": message("trashed"),
        "spam": message("spam"),
        "archived": message("archived"),
        "big": message("big", attachment=BIG),
        "labelled": message("labelled"),
    }
    place = {
        "seen flagged": ("INBOX", "\\Seen \\Flagged", INTERNAL_DATE),
        "answered": ("INBOX", "\\Answered \\Seen", LATER),
        "plain": ("INBOX", "", LATER),
        "sent one": ("Gesendet", "\\Seen", LATER),
        "a draft": ("Entwürfe", "\\Draft", LATER),
        "trashed": ("Papierkorb", "\\Seen", LATER),
        "spam": ("Unerwünscht", "", LATER),
        "archived": ("Old Stuff", "\\Seen", LATER),
        "big": ("Projects/Alpha", "\\Seen", LATER),
        "labelled": ("Projects/Alpha", "$label1", LATER),
    }
    for subject, raw in mail.items():
        folder, flags, when = place[subject]
        server.append(user, folder, raw, flags=flags, when=when)
    return mail


async def stored(runtime: Any, address_id: str) -> dict[str, dict[str, Any]]:
    rows = await runtime.db.fetch_all(
        """
        SELECT e.subject, e.keywords, e.received_at, e.size, m.name, m.role,
               p.name AS parent
          FROM mta.emails e
          JOIN mta.email_mailboxes em ON em.email_id = e.id
          JOIN mta.mailboxes m ON m.id = em.mailbox_id
          LEFT JOIN mta.mailboxes p ON p.id = m.parent_id
         WHERE e.address_id = %s
        """,
        (address_id,),
    )
    return {r["subject"]: r for r in rows}


async def test_imports_folders_flags_dates_and_a_large_attachment(client, runtime, imap):
    mail = seed_mailbox(imap, "ann")
    account, headers = await signed_in(runtime)
    address_id = await make_destination(runtime, account)

    resp = await client.post(
        "/api/transfers", json=start_body(address_id, imap, "ann"), headers=headers
    )
    assert resp.status == 201, await resp.text()
    created = await resp.json()
    assert created["object"] == "transfer"
    assert created["state"] == "queued"
    assert SOURCE_PASSWORD not in str(created) and "password" not in created
    sealed = await runtime.db.fetch_val(
        "SELECT password_sealed FROM mail.transfers WHERE id = %s", (created["id"],)
    )
    assert sealed and SOURCE_PASSWORD not in sealed  # sealed at rest while it is needed

    await run(client, runtime)
    done = await (await client.get(f"/api/transfers/{created['id']}", headers=headers)).json()
    assert done["state"] == "completed", (done["error"], done["progress"])
    progress = done["progress"]
    assert progress["messages_done"] == progress["messages_total"] == len(mail)
    assert progress["folders_done"] == progress["folders_total"] == 8  # Projects is empty
    assert progress["bytes_done"] == progress["bytes_total"] > len(BIG)
    assert progress["errors"] == 0 and progress["duplicates"] == 0
    assert done["finished_at"] is not None
    # Erased at the terminal state.
    assert (
        await runtime.db.fetch_val(
            "SELECT password_sealed FROM mail.transfers WHERE id = %s", (created["id"],)
        )
        is None
    )

    got = await stored(runtime, address_id)
    assert set(got) == set(mail)
    # Folders by SPECIAL-USE, whatever their names; others by name, hierarchy kept.
    assert got["seen flagged"]["role"] == "inbox"
    assert got["sent one"]["role"] == "sent"
    assert got["a draft"]["role"] == "drafts"
    assert got["trashed"]["role"] == "trash"
    assert got["spam"]["role"] == "junk"
    assert got["archived"]["role"] == "archive"
    assert (got["big"]["parent"], got["big"]["name"]) == ("Projects", "Alpha")
    # Flags became keywords; internal dates kept.
    assert got["seen flagged"]["keywords"] == ["$flagged", "$seen"]
    assert got["answered"]["keywords"] == ["$answered", "$seen"]
    assert got["plain"]["keywords"] == []
    assert got["a draft"]["keywords"] == ["$draft"]
    assert got["labelled"]["keywords"] == ["$label1"]
    assert got["seen flagged"]["received_at"] == INTERNAL_DATE
    assert got["plain"]["received_at"] == LATER
    # The large message is whole, in the blob store.
    assert got["big"]["size"] == len(mail["big"])
    blob = await runtime.db.fetch_val(
        "SELECT blob_id FROM mta.emails WHERE address_id = %s AND subject = 'big'", (address_id,)
    )
    importer = runner(client).importer
    assert await importer.blobs.get(blob) == mail["big"]

    # Counts and quota went the delivery way: the panel's folder list shows them.
    folders = await (
        await client.get(f"/api/addresses/{address_id}/folders", headers=headers)
    ).json()
    inbox = next(f for f in folders["data"] if f["role"] == "inbox")
    assert (inbox["total"], inbox["unread"]) == (3, 1)
    used = await runtime.db.fetch_val(
        "SELECT used_bytes FROM mta.quota_usage WHERE address_id = %s", (address_id,)
    )
    assert used == sum(len(m) for m in mail.values())

    # The source was only read: what was unseen there is still unseen.
    source = imap.connect("ann")
    source.select("INBOX", readonly=True)
    _, unseen = source.search(None, "UNSEEN")
    source.logout()
    assert len(unseen[0].split()) == 1

    # A second transfer of the same mailbox stores nothing twice.
    runtime.clock.advance(60)
    resp = await client.post(
        "/api/transfers", json=start_body(address_id, imap, "ann"), headers=headers
    )
    again = await resp.json()
    await run(client, runtime)
    again = await (await client.get(f"/api/transfers/{again['id']}", headers=headers)).json()
    assert again["state"] == "completed"
    assert again["progress"]["duplicates"] == len(mail)
    # Known by their Message-ID and size before any download: Dovecot sent no body.
    [last] = [line for line in imap.log().splitlines() if "imap(ann)" in line][-1:]
    assert "body_count=0" in last, last
    assert len(await stored(runtime, address_id)) == len(mail)
    count = await runtime.db.fetch_val(
        "SELECT count(*) FROM mta.emails WHERE address_id = %s", (address_id,)
    )
    assert count == len(mail)

    listing = await (await client.get("/api/transfers", headers=headers)).json()
    assert listing["object"] == "list" and listing["total"] == 2
    assert [t["id"] for t in listing["data"]] == [again["id"], created["id"]]


async def test_wrong_password_fails_fast_with_a_clear_error(client, runtime, imap):
    imap.add_user("bob", SOURCE_PASSWORD)
    account, headers = await signed_in(runtime)
    address_id = await make_destination(runtime, account)
    body = start_body(address_id, imap, "bob", password="not the password")
    created = await (await client.post("/api/transfers", json=body, headers=headers)).json()
    started = asyncio.get_running_loop().time()
    await run(client, runtime)
    assert asyncio.get_running_loop().time() - started < 10  # Dovecot waits 2 s on a failure
    done = await (await client.get(f"/api/transfers/{created['id']}", headers=headers)).json()
    assert done["state"] == "failed"
    assert "username or password" in done["error"]
    row = await runtime.db.fetch_one(
        "SELECT password_sealed, state FROM mail.transfers WHERE id = %s", (created["id"],)
    )
    assert row["password_sealed"] is None


async def test_unreachable_host_fails_with_the_password_erased(client, runtime, imap):
    account, headers = await signed_in(runtime)
    address_id = await make_destination(runtime, account)
    body = start_body(address_id, imap, "nobody", port=free_port())  # nothing listens there
    done = await transfer(client, runtime, body, headers)
    assert done["state"] == "failed"
    assert done["error"].startswith("could not connect to 127.0.0.1:")
    assert (
        await runtime.db.fetch_val(
            "SELECT password_sealed FROM mail.transfers WHERE id = %s", (done["id"],)
        )
        is None
    )


async def test_cancel_stops_a_running_transfer_within_seconds(client, runtime, imap):
    seed_bulk(imap, "carol", 800)
    account, headers = await signed_in(runtime)
    address_id = await make_destination(runtime, account)
    body = start_body(address_id, imap, "carol")
    created = await (await client.post("/api/transfers", json=body, headers=headers)).json()
    await runtime.jobs.run_due()
    running = await poll(
        client, headers, created["id"], lambda b: b["progress"]["messages_done"] >= 5
    )
    assert running["state"] == "running"
    assert running["progress"]["messages_total"] == 800
    assert running["progress"]["current_folder"] == "INBOX"

    resp = await client.delete(f"/api/transfers/{created['id']}", headers=headers)
    assert resp.status == 200
    assert (await resp.json())["state"] == "cancelled"
    started = asyncio.get_running_loop().time()
    await asyncio.wait_for(runner(client).wait_idle(), 5)
    assert asyncio.get_running_loop().time() - started < 3

    after = await (await client.get(f"/api/transfers/{created['id']}", headers=headers)).json()
    assert after["state"] == "cancelled"
    assert after["progress"]["messages_done"] < 800
    # What the progress says was imported is exactly what is stored: nothing after the cancel.
    count = await runtime.db.fetch_val(
        "SELECT count(*) FROM mta.emails WHERE address_id = %s", (address_id,)
    )
    assert count == after["progress"]["messages_done"]
    assert (
        await runtime.db.fetch_val(
            "SELECT password_sealed FROM mail.transfers WHERE id = %s", (created["id"],)
        )
        is None
    )
    again = await client.delete(f"/api/transfers/{created['id']}", headers=headers)
    assert again.status == 409
    assert (await again.json())["name"] == "conflict"


async def test_one_per_destination_ownership_and_validation(client, runtime, imap):
    account, headers = await signed_in(runtime)
    address_id = await make_destination(runtime, account)
    other, other_headers = await signed_in(runtime)
    other_address = await make_destination(runtime, other, "zed")

    destinations = await (await client.get("/api/transfers/destinations", headers=headers)).json()
    assert [d["address_id"] for d in destinations["data"]] == [address_id]
    assert destinations["data"][0]["active_transfer_id"] is None

    body = start_body(address_id, imap, "nobody")
    first = await client.post("/api/transfers", json=body, headers=headers)
    assert first.status == 201
    first_id = (await first.json())["id"]
    second = await client.post("/api/transfers", json=body, headers=headers)
    assert second.status == 409
    assert (await second.json())["name"] == "conflict"
    destinations = await (await client.get("/api/transfers/destinations", headers=headers)).json()
    assert destinations["data"][0]["active_transfer_id"] == first_id

    # Another account's destination and transfer are not found, like missing ones.
    foreign = await client.post(
        "/api/transfers", json=start_body(other_address, imap, "x"), headers=headers
    )
    assert foreign.status == 404
    assert (await client.get(f"/api/transfers/{first_id}", headers=other_headers)).status == 404
    assert (await client.delete(f"/api/transfers/{first_id}", headers=other_headers)).status == 404
    listing = await (await client.get("/api/transfers", headers=other_headers)).json()
    assert listing["total"] == 0

    # Fields.
    missing = await client.post(
        "/api/transfers", json={"address_id": address_id, "host": "x"}, headers=headers
    )
    assert missing.status == 422
    plaintext = await client.post(
        "/api/transfers",
        json={**start_body(address_id, imap, "x"), "host": "imap.example.org"},
        headers=headers,
    )
    assert plaintext.status == 400
    assert "loopback" in (await plaintext.json())["message"]
    bad_tls = await client.post("/api/transfers", json={**body, "tls": "ssl3"}, headers=headers)
    assert bad_tls.status == 400
    bad_port = await client.post("/api/transfers", json={**body, "port": 70000}, headers=headers)
    assert bad_port.status == 400


async def test_private_source_refused_without_the_setting(make_client, runtime, imap):
    client = await make_client({})  # the defaults: TRANSFER_ALLOW_PRIVATE off
    account, headers = await signed_in(runtime)
    address_id = await make_destination(runtime, account)
    done = await transfer(client, runtime, start_body(address_id, imap, "nobody"), headers)
    assert done["state"] == "failed"
    assert "private or local address" in done["error"]


async def test_a_process_runs_at_most_its_bound_the_rest_wait_queued(make_client, runtime, imap):
    seed_bulk(imap, "erin", 30)
    client = await make_client(
        {**HIGH_LIMITS, "TRANSFER_ALLOW_PRIVATE": "true", "TRANSFER_MAX_CONCURRENT": "1"}
    )
    account, headers = await signed_in(runtime)
    ids = []
    for local in ("one", "two"):
        address_id = await make_destination(runtime, account, local)
        body = start_body(address_id, imap, "erin")
        ids.append(
            (await (await client.post("/api/transfers", json=body, headers=headers)).json())["id"]
        )
    await client.mail_runtime.jobs.run_due()
    states = await runtime.db.fetch_all(
        "SELECT state FROM mail.transfers WHERE id = ANY(%s::uuid[]) ORDER BY created_at, id",
        (ids,),
    )
    assert sorted(r["state"] for r in states) == ["queued", "running"]
    assert len(runner(client).tasks) == 1
    # When the first ends, the process takes the next by itself.
    await asyncio.wait_for(runner(client).wait_idle(), 30)
    for transfer_id in ids:
        done = await (await client.get(f"/api/transfers/{transfer_id}", headers=headers)).json()
        assert done["state"] == "completed"
        assert done["progress"]["messages_done"] == 30


async def test_per_message_errors_are_counted_and_shown_and_the_rest_goes_on(
    make_client, runtime, imap
):
    imap.add_user("frank", SOURCE_PASSWORD)
    imap.append("frank", "INBOX", message("small one"))
    imap.append("frank", "INBOX", message("too big", body="y" * 5000))
    imap.append("frank", "INBOX", message("small two"))
    client = await make_client(
        {**HIGH_LIMITS, "TRANSFER_ALLOW_PRIVATE": "true", "TRANSFER_MAX_MESSAGE_BYTES": "2048"}
    )
    account, headers = await signed_in(runtime)
    address_id = await make_destination(runtime, account)
    done = await transfer(client, runtime, start_body(address_id, imap, "frank"), headers)
    assert done["state"] == "completed"
    assert done["progress"]["messages_done"] == 3
    assert done["progress"]["errors"] == 1
    [error] = done["progress"]["recent_errors"]
    assert error.startswith("INBOX UID 2:") and "over the limit" in error
    assert set(await stored(runtime, address_id)) == {"small one", "small two"}


async def test_a_full_destination_fails_the_transfer_clearly(client, runtime, imap):
    imap.add_user("gina", SOURCE_PASSWORD)
    for n in range(3):
        imap.append("gina", "INBOX", message(f"fits {n}", body="z" * 3000))
    account, headers = await signed_in(runtime)
    address_id = await make_destination(runtime, account)
    await runtime.db.execute(
        "UPDATE mail.addresses SET quota_bytes = 7000 WHERE id = %s", (address_id,)
    )
    done = await transfer(client, runtime, start_body(address_id, imap, "gina"), headers)
    assert done["state"] == "failed"
    assert "over its quota" in done["error"]
    # Two fitted, and what the progress says is what was stored.
    assert done["progress"]["messages_done"] == 2
    assert len(await stored(runtime, address_id)) == 2


async def test_the_screens_need_a_session_and_escape_the_id(client, runtime):
    for path in ("/transfers", "/transfers/0b7c1a5e-2d9e-4f43-9d8a-1f3c5e7a9b11"):
        response = await client.get(path, allow_redirects=False)
        assert response.status == 303
        assert response.headers["Location"].startswith("/signin?next=/transfers")
    _, headers = await signed_in(runtime)
    page = await client.get('/transfers/x"><img src=x onerror=alert(1)>', headers=headers)
    assert page.status == 200
    html = await page.text()
    assert "<img" not in html
    assert 'data-id="x&#34;&gt;&lt;img' in html
    listing = await (await client.get("/transfers", headers=headers)).text()
    assert 'href="/transfers" aria-current="page"' in listing


async def test_a_process_that_stops_hands_its_transfer_to_the_next(
    client, make_client, runtime, imap, monkeypatch
):
    # The first process is held after its 20th message until it stops: on a quiet
    # machine it would otherwise copy all 600 before the stop lands, and there
    # would be nothing to hand over.
    released = asyncio.Event()
    read = 0
    read_body = transfer_imap.Source.body

    async def held(self: transfer_imap.Source, uid: int) -> bytes | None:
        nonlocal read
        read += 1
        if read > 20:
            await released.wait()
        return await read_body(self, uid)

    monkeypatch.setattr(transfer_imap.Source, "body", held)
    seed_bulk(imap, "hank", 600)
    account, headers = await signed_in(runtime)
    address_id = await make_destination(runtime, account)
    body = start_body(address_id, imap, "hank")
    created = await (await client.post("/api/transfers", json=body, headers=headers)).json()
    await runtime.jobs.run_due()
    await poll(client, headers, created["id"], lambda b: b["progress"]["messages_done"] >= 20)
    await runner(client).close()  # what the gateway does when it stops (SIGTERM)
    released.set()
    handed = await runtime.db.fetch_one(
        "SELECT state, worker, messages_done FROM mail.transfers WHERE id = %s", (created["id"],)
    )
    assert handed["state"] == "running" and handed["worker"] is None
    assert 20 <= handed["messages_done"] < 600

    # Another process, at its next sweep: no heartbeat to outwait.
    other = await make_client({**HIGH_LIMITS, "TRANSFER_ALLOW_PRIVATE": "true"})
    runtime.clock.advance(SWEEP_EVERY_SECONDS)
    await run(other, runtime)
    done = await (await other.get(f"/api/transfers/{created['id']}", headers=headers)).json()
    assert done["state"] == "completed"
    assert done["progress"]["messages_done"] == 600
    assert done["progress"]["duplicates"] == 0
    count = await runtime.db.fetch_val(
        "SELECT count(DISTINCT message_id) FROM mta.emails WHERE address_id = %s", (address_id,)
    )
    total = await runtime.db.fetch_val(
        "SELECT count(*) FROM mta.emails WHERE address_id = %s", (address_id,)
    )
    assert count == total == 600


async def test_the_plans_storage_limit_stops_a_transfer_too(client, runtime, imap):
    """The plan's storage_bytes (over all the account's addresses) caps an import as it caps RCPT."""
    from tests.mta.test_billing_smtp import use_plans

    await use_plans(runtime.db, runtime.clock)  # the test plan allows 1000 bytes per account
    await runtime.db.execute(
        """UPDATE mail.plans SET features = features || '{"transfers": true}'"""
    )
    imap.add_user("hana", SOURCE_PASSWORD)
    imap.append("hana", "INBOX", message("too much", body="z" * 3000))
    account, headers = await signed_in(runtime)
    address_id = await make_destination(runtime, account)
    done = await transfer(client, runtime, start_body(address_id, imap, "hana"), headers)
    assert done["state"] == "failed" and "over its quota" in done["error"]
    assert not await stored(runtime, address_id)
