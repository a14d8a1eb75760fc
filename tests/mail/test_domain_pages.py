"""The domain and address pages as the server renders them (read without JavaScript).

The screens' actions are walked in a real browser (tests/browser/test_domains.py).
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest

from common.runtime import Runtime
from mail.pages.hosting import size
from mta.store import activity
from tests.mail.factories import signed_in
from tests.mail.hosting_fixtures import add_domain, settings  # noqa: F401

PASSWORD = "correct horse battery staple"


def rows(html: str, tbody_id: str) -> list[str]:
    """The link texts of a list's rows, in order."""
    body = html.split(f'id="{tbody_id}"', 1)[1].split("</tbody>", 1)[0]
    return re.findall(r'<a[^>]*data-field="[a-z_]+"[^>]*>([^<]+)</a>', body)


async def make_address(client: Any, headers: dict[str, str], domain_id: str, local: str) -> Any:
    resp = await client.post(
        f"/api/domains/{domain_id}/addresses",
        json={"local_part": local, "password": PASSWORD},
        headers=headers,
    )
    assert resp.status == 201, await resp.text()
    return await resp.json()


@pytest.mark.parametrize(
    "path",
    [
        "/domains",
        "/domains/00000000-0000-0000-0000-000000000000",
        "/domains/00000000-0000-0000-0000-000000000000/addresses?search=a",
        "/addresses/00000000-0000-0000-0000-000000000000",
    ],
)
async def test_a_signed_out_person_is_sent_to_sign_in_and_back(client: Any, path: str) -> None:
    response = await client.get(path, allow_redirects=False)
    assert response.status == 303
    assert response.headers["Location"].startswith("/signin?next=" + path.split("?")[0])


async def test_the_domain_list_pages_searches_and_sorts_like_the_api(
    client: Any, runtime: Runtime
) -> None:
    _, headers = await signed_in(runtime)
    for name in ("alpha.example", "beta.example", "gamma.test"):
        await add_domain(client, headers, name)

    html = await (await client.get("/domains?sort=name&direction=asc", headers=headers)).text()
    assert rows(html, "domains-rows") == ["alpha.example", "beta.example", "gamma.test"]
    assert "3 domains" in html

    search = await client.get("/domains?search=EXAMPLE&sort=name&direction=desc", headers=headers)
    assert rows(await search.text(), "domains-rows") == ["beta.example", "alpha.example"]

    # Two per page does not exist: the API's rule gives 10, and one page shows all.
    paged = await (await client.get("/domains?per_page=2&page=1", headers=headers)).text()
    assert len(rows(paged, "domains-rows")) == 3
    # A malformed parameter is not an error page: the defaults apply.
    broken = await client.get("/domains?page=abc&direction=sideways", headers=headers)
    assert broken.status == 200
    assert len(rows(await broken.text(), "domains-rows")) == 3


async def test_a_domain_page_shows_its_records_keys_and_links(
    client: Any, runtime: Runtime
) -> None:
    _, headers = await signed_in(runtime)
    domain = await add_domain(client, headers, "Bücher.example")
    other = await add_domain(client, headers, "other.example")
    response = await client.get(f"/domains/{domain['id']}", headers=headers)
    assert response.status == 200
    assert response.headers["Content-Security-Policy"].startswith("default-src 'self'")
    html = await response.text()
    assert '<h1 class="domain-name">bücher.example</h1>' in html
    records = (
        await (await client.get(f"/api/domains/{domain['id']}/dns", headers=headers)).json()
    )["records"]
    for record in records:
        assert f'data-purpose="{record["purpose"]}"' in html
        assert record["value"].replace('"', "&#34;") in html
    keys = (await (await client.get(f"/api/domains/{domain['id']}/keys", headers=headers)).json())[
        "data"
    ]
    standby = next(k for k in keys if not k["active"])
    assert f'data-action="activate" data-key="{standby["id"]}"' in html
    # The zone file is a plain link: it downloads without scripts.
    assert f'href="/api/domains/{domain["id"]}/dns/zone" download' in html
    # The fallback choice offers the account's other domains, not this one.
    choices = html.split('id="fallback-domain"', 1)[1].split("</select>", 1)[0]
    assert other["id"] in choices and domain["id"] not in choices


async def test_an_address_page_shows_its_folders(client: Any, runtime: Runtime) -> None:
    _, headers = await signed_in(runtime)
    domain = await add_domain(client, headers, "example.com")
    for local in ("zoe", "ann", "bob"):
        address = await make_address(client, headers, domain["id"], local)
    listing = await (await client.get(f"/domains/{domain['id']}/addresses", headers=headers)).text()
    assert rows(listing, "addresses-rows") == [
        "ann@example.com",
        "bob@example.com",
        "zoe@example.com",
    ]
    page = await (await client.get(f"/addresses/{address['id']}", headers=headers)).text()
    folders = page.split('id="folders"', 1)[1].split("</section>", 1)[0]
    names = re.findall(r'<th scope="row" data-label="Folder">([^<]+)</th>', folders)
    assert names == ["Inbox", "Drafts", "Sent", "Archive", "Junk", "Trash"]


async def test_another_accounts_domain_and_address_are_not_found(
    client: Any, runtime: Runtime
) -> None:
    _, owner = await signed_in(runtime)
    _, stranger = await signed_in(runtime)
    domain = await add_domain(client, owner, "owners-only.test")
    address = await make_address(client, owner, domain["id"], "ann")
    for path in (
        f"/domains/{domain['id']}",
        f"/domains/{domain['id']}/addresses",
        f"/addresses/{address['id']}",
        "/domains/not-a-uuid",
    ):
        response = await client.get(path, headers=stranger)
        assert response.status == 404, path
        html = await response.text()
        assert "Not found" in html and "owners-only" not in html


async def test_the_activity_of_an_address_pages_and_filters_by_kind(
    client: Any, runtime: Runtime
) -> None:
    _, headers = await signed_in(runtime)
    domain = await add_domain(client, headers, "example.com")
    address = await make_address(client, headers, domain["id"], "ann")
    start = runtime.clock.now()
    async with runtime.db.connection() as conn:
        for n in range(12):
            kind, outcome = ("refused", "over quota") if n == 0 else ("received", "Inbox")
            event = activity.Event(
                address["id"], kind, outcome, sender=f"s{n}@x.test", subject=f"m{n}"
            )
            await activity.record(conn, event, start + timedelta(minutes=n))

    def subjects(html: str) -> list[str]:
        return re.findall(r'data-label="Subject" class="wrap">([^<]+)</td>', html)

    first = await (await client.get(f"/addresses/{address['id']}", headers=headers)).text()
    assert subjects(first) == [f"m{n}" for n in range(11, 1, -1)]  # newest first, 10
    assert "Page 1 of 2" in first
    match = re.search(r'<a rel="next" data-page="2" href="\?([^"]+)"', first)
    assert match is not None
    nxt = match.group(1).replace("&amp;", "&")
    second = await (await client.get(f"/addresses/{address['id']}?{nxt}", headers=headers)).text()
    assert subjects(second) == ["m1", "m0"]
    refused = await client.get(f"/addresses/{address['id']}?kind=refused", headers=headers)
    assert subjects(await refused.text()) == ["m0"]


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (0, "0 bytes"),
        (1023, "1023 bytes"),
        (1536, "1.5 KiB"),
        (512 * 2**20, "512 MiB"),
        (2**30, "1 GiB"),
        (5 * 2**40, "5 TiB"),
    ],
)
def test_sizes_read_in_binary_units(value: int, words: str) -> None:
    assert size(value) == words
