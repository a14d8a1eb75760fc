"""The Addresses table (without folders and activity) over HTTP."""

from __future__ import annotations

from common.passwords import verify_password
from tests.mail.factories import signed_in
from tests.mail.hosting_fixtures import add_domain, settings  # noqa: F401

MAILBOX_PASSWORD = "a long mailbox password"


async def create(client, headers, domain, **fields):
    body = {"local_part": "ann", "password": MAILBOX_PASSWORD, **fields}
    return await client.post(f"/api/domains/{domain['id']}/addresses", json=body, headers=headers)


async def test_create_read_list_and_password_is_hashed(client, runtime):
    _, headers = await signed_in(runtime)
    domain = await add_domain(client, headers, "bücher.example")
    resp = await create(
        client,
        headers,
        domain,
        local_part="Ann.Lee",
        display_name="Ann Lee",
        recovery_email="Ann@Elsewhere.example",
    )
    assert resp.status == 201
    address = await resp.json()
    assert address["object"] == "address"
    assert address["email"] == "ann.lee@xn--bcher-kva.example"
    assert address["unicode_email"] == "ann.lee@bücher.example"
    assert address["display_name"] == "Ann Lee"
    assert address["recovery_email"] == "ann@elsewhere.example"
    # The domain's default quota applies when none is given.
    assert address["quota_bytes"] == domain["default_quota_bytes"]
    assert "password" not in str(address) and "hash" not in str(address)
    stored = await runtime.db.fetch_val(
        "SELECT password_hash FROM mail.addresses WHERE id = %s", (address["id"],)
    )
    assert stored.startswith("$argon2id$")
    assert await verify_password(stored, MAILBOX_PASSWORD)

    read = await (await client.get(f"/api/addresses/{address['id']}", headers=headers)).json()
    assert read == address
    # The mailbox starts with its default folders.
    folders = await (
        await client.get(f"/api/addresses/{address['id']}/folders", headers=headers)
    ).json()
    roles = {f.get("role") for f in folders["data"]}
    assert {"inbox", "drafts", "sent", "trash", "junk"} <= roles
    resp = await create(client, headers, domain, local_part="bob", quota_bytes=0)
    assert (await resp.json())["quota_bytes"] == 0  # unlimited
    listing = await (
        await client.get(f"/api/domains/{domain['id']}/addresses?search=bo", headers=headers)
    ).json()
    assert [a["local_part"] for a in listing["data"]] == ["bob"]
    listing = await (
        await client.get(f"/api/domains/{domain['id']}/addresses", headers=headers)
    ).json()
    assert [a["local_part"] for a in listing["data"]] == ["ann.lee", "bob"]
    assert listing["total"] == 2
    domain_now = await (await client.get(f"/api/domains/{domain['id']}", headers=headers)).json()
    assert domain_now["address_count"] == 2


INVALID_CREATES = [
    ({"local_part": "ann+tag"}, 400),
    ({"local_part": ".ann"}, 400),
    ({"local_part": "a..b"}, 400),
    ({"local_part": "ünï"}, 400),
    ({"local_part": "x" * 65}, 400),
    ({"local_part": ""}, 422),
    ({"password": "short"}, 400),
    ({"password": None}, 422),
    ({"quota_bytes": -5}, 400),
    ({"quota_bytes": "big"}, 400),
    ({"display_name": "Evil\r\nBcc: x@example.com"}, 400),
    ({"recovery_email": "not an address"}, 400),
    ({"colour": "red"}, 400),
]


async def test_create_validation(client, runtime):
    # One domain for every case: each domain costs an RSA key.
    _, headers = await signed_in(runtime)
    domain = await add_domain(client, headers)
    for fields, status in INVALID_CREATES:
        resp = await create(client, headers, domain, **fields)
        assert resp.status == status, (fields, await resp.text())
        assert (await resp.json())["statusCode"] == status
    assert await runtime.db.fetch_val("SELECT count(*) FROM mail.addresses") == 0


async def test_duplicate_is_a_conflict_and_foreign_domain_is_404(client, runtime):
    _, headers = await signed_in(runtime)
    _, other = await signed_in(runtime)
    domain = await add_domain(client, headers)
    assert (await create(client, headers, domain)).status == 201
    resp = await create(client, headers, domain, local_part="ANN")
    assert resp.status == 409
    assert (await resp.json())["name"] == "conflict"
    resp = await create(client, other, domain, local_part="eve")
    assert resp.status == 404


async def test_update_password_recovery_delete_and_ownership(client, runtime):
    _, headers = await signed_in(runtime)
    _, other = await signed_in(runtime)
    domain = await add_domain(client, headers)
    address = await (await create(client, headers, domain)).json()
    url = f"/api/addresses/{address['id']}"

    resp = await client.patch(
        url, json={"display_name": "Ann", "quota_bytes": 1000}, headers=headers
    )
    assert resp.status == 200
    assert ((await resp.json())["display_name"], (await resp.json())["quota_bytes"]) == (
        "Ann",
        1000,
    )
    assert (await client.patch(url, json={"local_part": "x"}, headers=headers)).status == 400

    resp = await client.post(
        url + "/password", json={"password": "another long password"}, headers=headers
    )
    assert resp.status == 200
    stored = await runtime.db.fetch_val(
        "SELECT password_hash FROM mail.addresses WHERE id = %s", (address["id"],)
    )
    assert await verify_password(stored, "another long password")
    assert (
        await client.post(url + "/password", json={"password": "short"}, headers=headers)
    ).status == 400

    resp = await client.post(
        url + "/recovery", json={"recovery_email": "me@elsewhere.example"}, headers=headers
    )
    assert (await resp.json())["recovery_email"] == "me@elsewhere.example"
    resp = await client.post(
        url + "/recovery", json={"recovery_email": "ann@example.com"}, headers=headers
    )
    assert resp.status == 400  # not the mailbox itself
    resp = await client.post(url + "/recovery", json={"recovery_email": None}, headers=headers)
    assert (await resp.json())["recovery_email"] is None
    assert (await client.post(url + "/recovery", json={}, headers=headers)).status == 422

    # Another account sees nothing, on every route.
    for method, path, body in [
        ("GET", url, None),
        ("PATCH", url, {"display_name": "x"}),
        ("DELETE", url, None),
        ("POST", url + "/password", {"password": "another long password"}),
        ("POST", url + "/recovery", {"recovery_email": None}),
    ]:
        resp = await client.request(method, path, json=body, headers=other)
        assert resp.status == 404, (method, path)
        assert (await resp.json())["name"] == "not_found"

    assert (await client.delete(url, headers=headers)).status == 204
    assert (await client.get(url, headers=headers)).status == 404
    count = await runtime.db.fetch_val("SELECT count(*) FROM mail.addresses")
    assert count == 0
