"""Sieve filters: the panel routes (compile errors with line numbers) and every action on delivery."""

from __future__ import annotations

from typing import Any

import pytest

from common.runtime import Runtime
from mta.store import emails
from tests.mail.factories import signed_in
from tests.mta import factories
from tests.mta.conftest import send

PREFIX = 'require ["fileinto", "imap4flags", "mailbox", "copy", "envelope", "body"];\n'


def message(subject: str, body: str = "hello") -> bytes:
    return (
        f"From: Bob <bob@sender.test>\r\nTo: alice@example.test\r\nSubject: {subject}\r\n"
        f"Message-ID: <{subject.replace(' ', '.')}@sender.test>\r\n\r\n{body}\r\n"
    ).encode()


@pytest.fixture
async def owner(runtime: Runtime) -> dict[str, Any]:
    """A signed-in account owning alice@example.test."""
    account, headers = await signed_in(runtime)
    domain_id = await factories.domain(runtime.db, account.id, "example.test")
    address_id = await factories.address(runtime.db, domain_id, "alice")
    return {"account": account, "headers": headers, "address_id": address_id}


async def create(client: Any, owner: dict[str, Any], script: str, **fields: Any) -> dict[str, Any]:
    body = {"address_id": owner["address_id"], "name": "f", "script": PREFIX + script, **fields}
    resp = await client.post("/api/filters", json=body, headers=owner["headers"])
    assert resp.status == 201, await resp.text()
    return await resp.json()


async def delivered(runtime: Runtime, owner: dict[str, Any]) -> dict[str, dict[str, Any]]:
    async with runtime.db.connection() as conn:
        return {r["subject"]: r for r in await emails.for_address(conn, owner["address_id"])}


async def activity(runtime: Runtime, owner: dict[str, Any]) -> list[dict[str, Any]]:
    return await runtime.db.fetch_all(
        "SELECT kind, outcome, detail FROM mta.activity WHERE address_id = %s ORDER BY id",
        (owner["address_id"],),
    )


# --- routes -------------------------------------------------------------------


async def test_validate_reports_the_line_of_the_error(
    gateway_client: Any, owner: dict[str, Any]
) -> None:
    ok = await gateway_client.post(
        "/api/filters/validate", json={"script": PREFIX + "keep;"}, headers=owner["headers"]
    )
    assert ok.status == 200
    assert (await ok.json())["valid"] is True
    bad = await gateway_client.post(
        "/api/filters/validate",
        json={"script": PREFIX + "if true {\n  fileinto;\n}"},
        headers=owner["headers"],
    )
    assert bad.status == 400
    body = await bad.json()
    assert body["statusCode"] == 400 and body["name"] == "validation_error"
    assert "line 3:" in body["message"]
    unsupported = await gateway_client.post(
        "/api/filters/validate",
        json={"script": 'require "vacation";\nvacation "away";'},
        headers=owner["headers"],
    )
    assert unsupported.status == 400
    assert "line 1: extension vacation is not supported" in (await unsupported.json())["message"]


async def test_validate_is_never_taken_for_a_filter_id(
    gateway_client: Any, owner: dict[str, Any]
) -> None:
    resp = await gateway_client.get("/api/filters/validate", headers=owner["headers"])
    assert resp.status == 405
    assert (await resp.json())["name"] == "method_not_allowed"


async def test_crud_and_list(gateway_client: Any, owner: dict[str, Any]) -> None:
    created = await create(gateway_client, owner, "keep;", name="Keep all", position=2)
    assert created["object"] == "filter" and created["enabled"] is True
    second = await create(gateway_client, owner, "stop;", name="First", position=1)
    listed = await (await gateway_client.get("/api/filters", headers=owner["headers"])).json()
    assert listed["object"] == "list" and listed["total"] == 2
    assert [f["name"] for f in listed["data"]] == ["First", "Keep all"]
    bad_save = await gateway_client.patch(
        f"/api/filters/{created['id']}", json={"script": "fileinto;"}, headers=owner["headers"]
    )
    assert bad_save.status == 400 and "line 1" in (await bad_save.json())["message"]
    patched = await gateway_client.patch(
        f"/api/filters/{created['id']}",
        json={"enabled": False, "name": "Off"},
        headers=owner["headers"],
    )
    assert (await patched.json())["enabled"] is False
    read = await gateway_client.get(f"/api/filters/{created['id']}", headers=owner["headers"])
    assert (await read.json())["name"] == "Off"
    deleted = await gateway_client.delete(f"/api/filters/{second['id']}", headers=owner["headers"])
    assert deleted.status == 204
    gone = await gateway_client.get(f"/api/filters/{second['id']}", headers=owner["headers"])
    assert gone.status == 404


async def test_missing_fields_and_unknown_fields(
    gateway_client: Any, owner: dict[str, Any]
) -> None:
    resp = await gateway_client.post(
        "/api/filters", json={"name": "x", "script": "keep;"}, headers=owner["headers"]
    )
    assert resp.status == 422 and (await resp.json())["name"] == "missing_required_field"
    resp = await gateway_client.post(
        "/api/filters",
        json={"address_id": owner["address_id"], "name": "x", "script": "keep;", "bogus": 1},
        headers=owner["headers"],
    )
    assert resp.status == 400


async def test_another_accounts_filters_and_addresses_are_404(
    gateway_client: Any, runtime: Runtime, owner: dict[str, Any]
) -> None:
    created = await create(gateway_client, owner, "keep;")
    _other, other_headers = await signed_in(runtime)
    for method, path in [
        ("GET", f"/api/filters/{created['id']}"),
        ("PATCH", f"/api/filters/{created['id']}"),
        ("DELETE", f"/api/filters/{created['id']}"),
        ("GET", f"/api/addresses/{owner['address_id']}/folders"),
        ("GET", f"/api/addresses/{owner['address_id']}/activity"),
    ]:
        resp = await gateway_client.request(method, path, json={}, headers=other_headers)
        assert resp.status == 404, (method, path)
    resp = await gateway_client.post(
        "/api/filters",
        json={"address_id": owner["address_id"], "name": "x", "script": "keep;"},
        headers=other_headers,
    )
    assert resp.status == 404
    listed = await (await gateway_client.get("/api/filters", headers=other_headers)).json()
    assert listed["total"] == 0
    assert (await gateway_client.get("/api/filters")).status == 401


# --- actions on delivery --------------------------------------------------------


async def test_fileinto_create_flags_keep_discard_and_stop(
    gateway_client: Any, runtime: Runtime, owner: dict[str, Any], smtp_port: int
) -> None:
    await create(
        gateway_client,
        owner,
        'if header :contains "subject" "[list]" {\n'
        '  fileinto :create "Lists/Python";\n  stop;\n}\n'
        'if header :is "subject" "spam" { discard; stop; }\n'
        'if address :domain :is "from" "sender.test" { addflag "\\\\Flagged"; }\n'
        'if body :contains "urgent" { keep :flags ["\\\\Seen", "$important"]; stop; }\n',
        position=0,
    )
    # A second filter runs after the first unless it stopped.
    await create(gateway_client, owner, 'fileinto :copy "Archive";', position=1)
    for subject, body in [
        ("[list] news", "x"),
        ("spam", "x"),
        ("plain", "x"),
        ("alert", "urgent!"),
    ]:
        result = await send(
            smtp_port, "bob@sender.test", ["alice@example.test"], message(subject, body)
        )
        assert result["data"][0] == 250
    rows = await delivered(runtime, owner)
    assert "spam" not in rows  # discarded
    assert rows["[list] news"]["folders"] == ["Python"]
    assert rows["plain"]["folders"] == ["Archive", "Inbox"]  # :copy plus the implicit keep
    assert rows["plain"]["keywords"] == ["$flagged"]
    assert rows["alert"]["folders"] == ["Inbox"]
    assert rows["alert"]["keywords"] == ["$important", "$seen"]
    folders = await runtime.db.fetch_all(
        "SELECT m.name, p.name AS parent FROM mta.mailboxes m JOIN mta.mailboxes p ON p.id = m.parent_id"
        " WHERE m.address_id = %s",
        (owner["address_id"],),
    )
    assert folders == [{"name": "Python", "parent": "Lists"}]
    events = await activity(runtime, owner)
    assert [e["kind"] for e in events] == ["filtered"] * 4
    assert events[1]["outcome"] == "discarded"


async def test_disabled_filters_do_not_run(
    gateway_client: Any, runtime: Runtime, owner: dict[str, Any], smtp_port: int
) -> None:
    await create(gateway_client, owner, "discard;", enabled=False)
    assert (await send(smtp_port, "bob@sender.test", ["alice@example.test"], message("kept")))[
        "data"
    ][0] == 250
    assert (await delivered(runtime, owner))["kept"]["folders"] == ["Inbox"]


@pytest.mark.parametrize(
    "script",
    [
        'fileinto "Does/Not/Exist";',  # no :create: a run-time error (RFC 5228 4.1)
        'redirect "not an address";',
        'if header :regex "subject" "x" { discard; }',  # a match type we cannot run
    ],
)
async def test_a_filter_failing_at_run_time_keeps_the_message_in_the_inbox(
    gateway_client: Any, runtime: Runtime, owner: dict[str, Any], smtp_port: int, script: str
) -> None:
    # Saved directly: some of these the compiler would already refuse.
    now = runtime.clock.now()
    async with runtime.db.connection() as conn:
        from mta.store import filters as filter_store

        await filter_store.insert(
            conn,
            account_id=owner["account"].id,
            address_id=owner["address_id"],
            name="broken",
            script=PREFIX + "discard;\n" + script if "regex" not in script else script,
            enabled=True,
            position=0,
            now=now,
        )
    result = await send(smtp_port, "bob@sender.test", ["alice@example.test"], message("precious"))
    assert result["data"][0] == 250
    rows = await delivered(runtime, owner)
    assert rows["precious"]["folders"] == ["Inbox"]  # discard was not applied either
    events = await activity(runtime, owner)
    assert events[-1]["kind"] == "failed"
    assert events[-1]["detail"].startswith("filter failed:")


async def test_folders_and_activity_routes(
    gateway_client: Any, runtime: Runtime, owner: dict[str, Any], smtp_port: int
) -> None:
    await create(gateway_client, owner, 'if header :is "subject" "b" { fileinto :create "Work"; }')
    for subject in ("a", "b", "c"):
        await send(smtp_port, "bob@sender.test", ["alice@example.test"], message(subject))
    resp = await gateway_client.get(
        f"/api/addresses/{owner['address_id']}/folders", headers=owner["headers"]
    )
    assert resp.status == 200
    body = await resp.json()
    by_name = {f["name"]: f for f in body["data"]}
    assert [f["name"] for f in body["data"]][:6] == [
        "Inbox",
        "Drafts",
        "Sent",
        "Archive",
        "Junk",
        "Trash",
    ]
    assert (by_name["Inbox"]["total"], by_name["Inbox"]["unread"], by_name["Inbox"]["role"]) == (
        2,
        2,
        "inbox",
    )
    assert (by_name["Work"]["total"], by_name["Work"]["role"]) == (1, None)
    assert body["usage"]["emails"] == 3
    # Seen mail is not unread (counts follow keyword changes).
    await runtime.db.execute(
        "UPDATE mta.emails SET keywords = array_append(keywords, '$seen') WHERE subject = 'a'"
    )
    body = await (
        await gateway_client.get(
            f"/api/addresses/{owner['address_id']}/folders", headers=owner["headers"]
        )
    ).json()
    assert {f["name"]: f["unread"] for f in body["data"]}["Inbox"] == 1
    resp = await gateway_client.get(
        f"/api/addresses/{owner['address_id']}/activity?per_page=25", headers=owner["headers"]
    )
    page = await resp.json()
    assert page["object"] == "list" and page["total"] == 3 and page["per_page"] == 25
    newest = page["data"][0]
    assert (
        newest["subject"] == "c" and newest["kind"] == "received" and newest["peer"] == "127.0.0.1"
    )
    assert newest["sender"] == "bob@sender.test" and newest["outcome"] == "inbox"
    assert {e["kind"] for e in page["data"]} == {"received", "filtered"}
    bad = await gateway_client.get(
        f"/api/addresses/{owner['address_id']}/activity?kind=nope", headers=owner["headers"]
    )
    assert bad.status == 400


async def test_envelope_to_sees_the_subaddress_the_sender_used(
    gateway_client: Any, runtime: Runtime, owner: dict[str, Any], smtp_port: int
) -> None:
    await create(
        gateway_client,
        owner,
        'if envelope :localpart :matches "to" "*+lists" { fileinto :create "Lists"; }',
    )
    for rcpt, subject in [("alice+lists@example.test", "tagged"), ("alice@example.test", "plain")]:
        assert (await send(smtp_port, "bob@sender.test", [rcpt], message(subject)))["data"][
            0
        ] == 250
    rows = await delivered(runtime, owner)
    assert rows["tagged"]["folders"] == ["Lists"]
    assert rows["plain"]["folders"] == ["Inbox"]


async def test_an_edited_filter_runs_its_new_script_from_the_next_message(
    gateway_client: Any, runtime: Runtime, owner: dict[str, Any], smtp_port: int
) -> None:
    # The daemon keeps compiled scripts by the version the RCPT lookup reads.
    made = await create(gateway_client, owner, 'fileinto :create "First";')
    for subject in ("one", "two"):
        result = await send(smtp_port, "bob@sender.test", ["alice@example.test"], message(subject))
        assert result["data"][0] == 250
    runtime.clock.advance(1)  # type: ignore[attr-defined]
    resp = await gateway_client.patch(
        f"/api/filters/{made['id']}",
        json={"script": PREFIX + 'fileinto :create "Second";'},
        headers=owner["headers"],
    )
    assert resp.status == 200, await resp.text()
    result = await send(smtp_port, "bob@sender.test", ["alice@example.test"], message("three"))
    assert result["data"][0] == 250
    rows = await delivered(runtime, owner)
    assert [rows[s]["folders"] for s in ("one", "two", "three")] == [
        ["First"],
        ["First"],
        ["Second"],
    ]
