"""The filter screens carry the account's addresses in the page: no call per domain.

An account with a dozen domains used to fetch each domain's addresses from its
screen module, one request per domain, and ran out of its rate limit; the
picker is now rendered by the server from one query.
"""

from __future__ import annotations

import re
from typing import Any

from common.runtime import Runtime
from tests.mail.factories import signed_in
from tests.mail.hosting_fixtures import add_domain, settings  # noqa: F401
from tests.mail.test_domain_pages import make_address

FILTER_ID = "0b0e0c4a-3f55-4d6e-9a8e-2f0f6c1d2e3f"


def picker(html: str, select_id: str) -> list[tuple[str, str, bool]]:
    """(value, label, selected) of a select's options, the placeholder left out."""
    body = html.split(f'id="{select_id}"', 1)[1].split("</select>", 1)[0]
    found = re.findall(r'<option value="([^"]*)"( selected)?>([^<]*)</option>', body)
    return [(value, label, bool(chosen)) for value, chosen, label in found if value]


async def test_the_filter_screens_list_every_address_of_the_account(
    client: Any, runtime: Runtime, clock: Any
) -> None:
    _, headers = await signed_in(runtime)
    _, other = await signed_in(runtime)
    made = {}
    for n in range(12):
        clock.advance(1)  # this module's DNS settings keep the spec's rate limit
        domain = await add_domain(client, headers, f"d{n:02}.example")
        address = await make_address(client, headers, domain["id"], "ann")
        made[address["id"]] = address["email"]
    stranger = await add_domain(client, other, "stranger.example")
    foreign = await make_address(client, other, stranger["id"], "eve")
    expected = sorted(made.items(), key=lambda item: item[1])

    new = await client.get("/filters/new", headers=headers)
    html = await new.text()
    assert [(v, label) for v, label, _ in picker(html, "address_id")] == expected
    assert 'id="no-addresses" hidden' in html
    # The list screen's filter picker too, with the asked one chosen.
    chosen = expected[5][0]
    listing = await (await client.get(f"/filters?address_id={chosen}", headers=headers)).text()
    assert [(v, s) for v, _, s in picker(listing, "address")] == [
        (v, v == chosen) for v, _ in expected
    ]
    # Another account's address is neither listed nor chosen from the URL.
    sneaky = await client.get(f"/filters/new?address_id={foreign['id']}", headers=headers)
    options = picker(await sneaky.text(), "address_id")
    assert foreign["id"] not in {v for v, _, _ in options}
    assert not any(s for _, _, s in options)


async def test_an_account_without_addresses_is_told_so_by_the_page(
    client: Any, runtime: Runtime
) -> None:
    _, headers = await signed_in(runtime)
    for path in ("/filters/new", f"/filters/{FILTER_ID}", "/filters"):
        html = await (await client.get(path, headers=headers)).text()
        assert 'id="no-addresses">' in html, path
