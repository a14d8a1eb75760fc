"""Sending API test data: a domain the DNS check verified, API keys, and the resend SDK.

The resend SDK (unmodified, synchronous, over ``requests``) is pointed at the
gateway under test with ``resend.api_url`` and called in a thread, so the
test's event loop keeps serving the gateway meanwhile.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest
import resend

from tests.mail.hosting_fixtures import add_domain

T = TypeVar("T")


def publish(dns_server: Any, records: list[dict[str, Any]], purposes: tuple[str, ...]) -> None:
    for r in records:
        if r["purpose"] not in purposes:
            continue
        if r["type"] == "TXT":
            chunks = [r["value"][i : i + 255] for i in range(0, len(r["value"]), 255)]
            dns_server.add(r["name"], "TXT", " ".join(f'"{c}"' for c in chunks))
        else:
            dns_server.add(r["name"], r["type"], r["value"])


async def sending_domain(
    client: Any,
    headers: dict[str, str],
    dns_server: Any,
    name: str = "example.com",
    *,
    records: tuple[str, ...] = ("spf", "dkim"),
) -> dict[str, Any]:
    """A domain of the account whose ``records`` the DNS check found (published, then checked)."""
    domain = await add_domain(client, headers, name)
    url = f"/api/domains/{domain['id']}"
    found = await (await client.get(url + "/dns", headers=headers)).json()
    publish(dns_server, found["records"], records)
    resp = await client.post(url + "/check", headers=headers)
    assert resp.status == 200, await resp.text()
    return domain


async def api_key(
    client: Any,
    headers: dict[str, str],
    permission: str = "full_access",
    domain_id: str | None = None,
    name: str = "test key",
) -> str:
    body: dict[str, Any] = {"name": name, "permission": permission}
    if domain_id is not None:
        body["domain_id"] = domain_id
    resp = await client.post("/api/api-keys", json=body, headers=headers)
    assert resp.status == 201, await resp.text()
    return str((await resp.json())["token"])


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


class Sdk:
    """The resend SDK against one gateway: ``await sdk(key, resend.Emails.send, params)``."""

    async def __call__(self, key: str | None, fn: Callable[..., T], *args: Any) -> T:
        def call() -> T:
            resend.api_key = key  # the SDK's one global credential
            return fn(*args)

        return await asyncio.to_thread(call)


@pytest.fixture
def sdk(client: Any) -> Iterator[Sdk]:
    saved = resend.api_url, resend.api_key
    resend.api_url = str(client.make_url("/api")).rstrip("/")
    try:
        yield Sdk()
    finally:
        resend.api_url, resend.api_key = saved
