"""The Domains table over HTTP: add, list, read, update, delete, keys, fallback."""

from __future__ import annotations

import asyncio

import dkim
import dns.resolver

from mail.dkim.keys import dkim_sealer
from tests.conftest import TEST_SECRET
from tests.mail.factories import signed_in
from tests.mail.hosting_fixtures import add_domain, settings  # noqa: F401


async def test_add_domain_validates_stores_ascii_and_generates_keys(client, runtime):
    _, headers = await signed_in(runtime)
    resp = await client.post("/api/domains", json={"name": "Bücher.Example."}, headers=headers)
    assert resp.status == 201
    body = await resp.json()
    assert body["object"] == "domain"
    assert body["name"] == "xn--bcher-kva.example"
    assert body["unicode_name"] == "bücher.example"
    assert body["dns_status"] == "unchecked"
    assert body["fallback_domain"] is None

    keys = await (await client.get(f"/api/domains/{body['id']}/keys", headers=headers)).json()
    assert keys["object"] == "list"
    assert sorted((k["algorithm"], k["active"]) for k in keys["data"]) == [
        ("ed25519-sha256", False),
        ("rsa-sha256", True),
    ]
    for key in keys["data"]:
        assert set(key) == {
            "object",
            "id",
            "selector",
            "algorithm",
            "public_key_record",
            "active",
            "created_at",
        }
        assert (
            key["public_key_record"]["name"]
            == f"{key['selector']}._domainkey.xn--bcher-kva.example"
        )
    # The private keys are sealed at rest and open to dkimpy's formats.
    rows = await runtime.db.fetch_all(
        "SELECT algorithm, private_key_sealed FROM mail.dkim_keys WHERE domain_id = %s",
        (body["id"],),
    )
    sealer = dkim_sealer(TEST_SECRET)
    for row in rows:
        assert "PRIVATE" not in row["private_key_sealed"]
        opened = sealer.open_bytes(row["private_key_sealed"])
        if row["algorithm"] == "rsa-sha256":
            assert opened.startswith(b"-----BEGIN RSA PRIVATE KEY-----")
        else:
            assert len(opened) == 44  # base64 of the 32-byte seed
        # Never in any response.
        assert (
            row["private_key_sealed"]
            not in await (
                await client.get(f"/api/domains/{body['id']}/keys", headers=headers)
            ).text()
        )


async def test_add_domain_refusals(client, runtime):
    _, headers = await signed_in(runtime)
    _, other_headers = await signed_in(runtime)
    await add_domain(client, headers, "example.com")

    resp = await client.post("/api/domains", json={"name": "EXAMPLE.com"}, headers=other_headers)
    assert resp.status == 409
    assert (await resp.json())["name"] == "conflict"

    resp = await client.post("/api/domains", json={"name": "not a domain"}, headers=headers)
    assert resp.status == 400
    body = await resp.json()
    assert body["name"] == "validation_error" and body["statusCode"] == 400

    resp = await client.post("/api/domains", json={}, headers=headers)
    assert resp.status == 422
    assert (await resp.json())["name"] == "missing_required_field"

    resp = await client.post("/api/domains", json={"name": "example.org"})
    assert resp.status == 401


async def test_list_read_update_and_ownership(client, runtime):
    _, headers = await signed_in(runtime)
    _, other = await signed_in(runtime)
    a = await add_domain(client, headers, "alpha.example")
    await add_domain(client, headers, "beta.example")
    foreign = await add_domain(client, other, "foreign.example")

    listing = await (
        await client.get("/api/domains?sort=name&direction=asc&per_page=25", headers=headers)
    ).json()
    assert [d["name"] for d in listing["data"]] == ["alpha.example", "beta.example"]
    assert (listing["object"], listing["total"], listing["per_page"], listing["pages"]) == (
        "list",
        2,
        25,
        1,
    )
    searched = await (await client.get("/api/domains?search=bet", headers=headers)).json()
    assert [d["name"] for d in searched["data"]] == ["beta.example"]

    resp = await client.patch(
        f"/api/domains/{a['id']}",
        json={"description": "Main", "dmarc_policy": "reject", "default_quota_bytes": 5_000_000},
        headers=headers,
    )
    assert resp.status == 200
    updated = await resp.json()
    assert (updated["description"], updated["dmarc_policy"], updated["default_quota_bytes"]) == (
        "Main",
        "reject",
        5_000_000,
    )
    # The DMARC record follows the policy.
    records = (await (await client.get(f"/api/domains/{a['id']}/dns", headers=headers)).json())[
        "records"
    ]
    assert next(r for r in records if r["purpose"] == "dmarc")["value"] == "v=DMARC1; p=reject"

    for bad in ({"dmarc_policy": "drop"}, {"default_quota_bytes": -1}, {"name": "x.example"}):
        resp = await client.patch(f"/api/domains/{a['id']}", json=bad, headers=headers)
        assert resp.status == 400, bad

    # Another account's domain is 404 on every route, exactly like a missing one.
    fid = foreign["id"]
    for method, path in [
        ("GET", f"/api/domains/{fid}"),
        ("PATCH", f"/api/domains/{fid}"),
        ("DELETE", f"/api/domains/{fid}"),
        ("GET", f"/api/domains/{fid}/dns"),
        ("GET", f"/api/domains/{fid}/dns/zone"),
        ("GET", f"/api/domains/{fid}/dns/provider"),
        ("POST", f"/api/domains/{fid}/check"),
        ("GET", f"/api/domains/{fid}/keys"),
        ("GET", f"/api/domains/{fid}/addresses"),
        ("GET", "/api/domains/not-a-uuid"),
    ]:
        resp = await client.request(method, path, json={}, headers=headers)
        assert resp.status == 404, (method, path)
        assert (await resp.json())["name"] == "not_found"


async def test_delete_removes_domain_keys_and_addresses_in_one_go(client, runtime):
    _, headers = await signed_in(runtime)
    domain = await add_domain(client, headers)
    resp = await client.post(
        f"/api/domains/{domain['id']}/addresses",
        json={"local_part": "ann", "password": "a long mailbox password"},
        headers=headers,
    )
    assert resp.status == 201
    address = await resp.json()
    # Mail in the mailbox store: a thread and an email of the address.
    now = runtime.clock.now()
    thread_id = await runtime.db.fetch_val(
        "INSERT INTO mta.threads (address_id, created_at) VALUES (%s, %s) RETURNING id",
        (address["id"], now),
    )
    await runtime.db.execute(
        "INSERT INTO mta.emails (address_id, blob_id, thread_id, size, received_at)"
        " VALUES (%s, %s, %s, 10, %s)",
        (address["id"], "a" * 64, thread_id, now),
    )
    resp = await client.delete(f"/api/domains/{domain['id']}", headers=headers)
    assert resp.status == 204
    for table in ("emails", "threads", "mailboxes"):
        count = await runtime.db.fetch_val(
            f"SELECT count(*) FROM mta.{table} WHERE address_id = %s", (address["id"],)
        )
        assert count == 0, table
    for table in ("domains", "dkim_keys", "addresses"):
        column = "id" if table == "domains" else "domain_id"
        count = await runtime.db.fetch_val(
            f"SELECT count(*) FROM mail.{table} WHERE {column} = %s", (domain["id"],)
        )
        assert count == 0, table
    assert (await client.get(f"/api/domains/{domain['id']}", headers=headers)).status == 404


async def test_activate_switches_signing_key_and_it_verifies_through_dns(
    client, runtime, dns_server
):
    _, headers = await signed_in(runtime)
    domain = await add_domain(client, headers)
    keys = (await (await client.get(f"/api/domains/{domain['id']}/keys", headers=headers)).json())[
        "data"
    ]
    ed = next(k for k in keys if k["algorithm"] == "ed25519-sha256")
    resp = await client.post(
        f"/api/domains/{domain['id']}/keys/{ed['id']}/activate", headers=headers
    )
    assert resp.status == 200
    assert (await resp.json())["active"] is True
    keys = (await (await client.get(f"/api/domains/{domain['id']}/keys", headers=headers)).json())[
        "data"
    ]
    assert [k["selector"] for k in keys if k["active"]] == [ed["selector"]]

    # Publish the record set as the panel shows it, then sign with the active key.
    records = (
        await (await client.get(f"/api/domains/{domain['id']}/dns", headers=headers)).json()
    )["records"]
    for record in records:
        if record["purpose"] == "dkim":
            dns_server.add(record["name"], "TXT", f'"{record["value"]}"')
    row = await runtime.db.fetch_one(
        "SELECT selector, algorithm, private_key_sealed FROM mail.dkim_keys"
        " WHERE domain_id = %s AND active",
        (domain["id"],),
    )
    private = dkim_sealer(TEST_SECRET).open_bytes(row["private_key_sealed"])
    message = b"From: ann@example.com\r\nTo: bob@example.net\r\nSubject: hi\r\n\r\nHello.\r\n"
    signed = (
        dkim.sign(
            message,
            row["selector"].encode(),
            b"example.com",
            private,
            signature_algorithm=row["algorithm"].encode(),
        )
        + message
    )
    assert b"a=ed25519-sha256" in signed
    resolver = dns.resolver.Resolver(configure=False)
    resolver.nameservers = ["127.0.0.1"]
    resolver.port = dns_server.port

    def dnsfunc(name: bytes, timeout: int = 5) -> bytes:
        answer = resolver.resolve(name.decode().rstrip("."), "TXT", lifetime=timeout)
        return b"".join(b"".join(r.strings) for r in answer)

    assert await asyncio.to_thread(dkim.verify, signed, dnsfunc=dnsfunc)

    # A key id of another domain is 404.
    other = await add_domain(client, headers, "other.example")
    resp = await client.post(
        f"/api/domains/{other['id']}/keys/{ed['id']}/activate", headers=headers
    )
    assert resp.status == 404


async def test_fallback_is_set_shown_cleared_and_loops_refused(client, runtime):
    _, headers = await signed_in(runtime)
    _, other = await signed_in(runtime)
    a = await add_domain(client, headers, "a.example")
    b = await add_domain(client, headers, "b.example")
    c = await add_domain(client, headers, "c.example")
    foreign = await add_domain(client, other, "foreign.example")

    async def fallback(domain, target):
        return await client.post(
            f"/api/domains/{domain['id']}/fallback",
            json={"fallback_domain_id": target and target["id"]},
            headers=headers,
        )

    resp = await fallback(a, b)
    assert resp.status == 200
    body = await resp.json()
    assert body["fallback_domain"] == {"id": b["id"], "name": "b.example"}
    assert (await fallback(b, c)).status == 200
    # c -> a would close a -> b -> c -> a.
    resp = await fallback(c, a)
    assert resp.status == 400
    assert "loop" in (await resp.json())["message"]
    resp = await fallback(a, a)
    assert resp.status == 400
    resp = await fallback(a, foreign)
    assert resp.status == 404
    resp = await client.post(
        f"/api/domains/{a['id']}/fallback", json={"fallback_domain_id": "nope"}, headers=headers
    )
    assert resp.status == 400
    resp = await client.post(f"/api/domains/{a['id']}/fallback", json={}, headers=headers)
    assert resp.status == 422
    resp = await fallback(a, None)
    assert resp.status == 200
    assert (await resp.json())["fallback_domain"] is None
    # Deleting a fallback domain clears the setting instead of failing.
    assert (await fallback(a, c)).status == 200
    assert (await client.delete(f"/api/domains/{c['id']}", headers=headers)).status == 204
    shown = await (await client.get(f"/api/domains/{a['id']}", headers=headers)).json()
    assert shown["fallback_domain_id"] is None


async def test_key_rotation_create_standby_then_retire_the_old(client, runtime):
    _, headers = await signed_in(runtime)
    domain = await add_domain(client, headers)
    url = f"/api/domains/{domain['id']}/keys"
    resp = await client.post(url, json={"algorithm": "rsa-sha256"}, headers=headers)
    assert resp.status == 201
    new = await resp.json()
    assert (new["algorithm"], new["active"]) == ("rsa-sha256", False)
    assert (await client.post(url, json={"algorithm": "dsa"}, headers=headers)).status == 400
    keys = (await (await client.get(url, headers=headers)).json())["data"]
    old = next(k for k in keys if k["active"])
    # The new standby key is published in the record set before it signs.
    records = (
        await (await client.get(f"/api/domains/{domain['id']}/dns", headers=headers)).json()
    )["records"]
    assert new["public_key_record"]["name"] in {
        r["name"] for r in records if r["purpose"] == "dkim"
    }

    resp = await client.delete(f"{url}/{old['id']}", headers=headers)
    assert resp.status == 409  # the active key signs mail
    assert (await client.post(f"{url}/{new['id']}/activate", headers=headers)).status == 200
    assert (await client.delete(f"{url}/{old['id']}", headers=headers)).status == 204
    keys = (await (await client.get(url, headers=headers)).json())["data"]
    assert old["id"] not in {k["id"] for k in keys}
    assert [k["id"] for k in keys if k["active"]] == [new["id"]]
