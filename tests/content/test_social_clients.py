"""The stand-ins checked against the networks' widely used Python clients
(Mastodon.py, the AT Protocol SDK), so they speak the real wire format."""

from __future__ import annotations

import asyncio
from typing import Any

from atproto import AsyncClient  # type: ignore[import-untyped]
from mastodon import Mastodon  # type: ignore[import-untyped]

from tests.content.social_standins import BlueskyStandIn, MastodonStandIn
from tests.content.test_media import png


async def test_mastodon_py_speaks_to_the_mastodon_standin(aiohttp_server: Any) -> None:
    standin = MastodonStandIn()
    base = str((await aiohttp_server(standin.app())).make_url("")).rstrip("/")
    client_id, client_secret = await asyncio.to_thread(
        Mastodon.create_app,
        "CMS",
        api_base_url=base,
        redirect_uris="https://cms.example/social/oauth/callback",
        scopes=["read:accounts", "write:statuses", "write:media"],
    )
    assert (client_id, client_secret) == ("mcid0", "mcsecret0")
    token = "known-token"
    standin.access.add(token)
    api = Mastodon(access_token=token, api_base_url=base)
    me = await asyncio.to_thread(api.account_verify_credentials)
    assert me["acct"] == "site"
    media = await asyncio.to_thread(api.media_post, png(), mime_type="image/png")
    first = await asyncio.to_thread(
        api.status_post, "Hello", media_ids=[media["id"]], idempotency_key="k1"
    )
    again = await asyncio.to_thread(
        api.status_post, "Hello", media_ids=[media["id"]], idempotency_key="k1"
    )
    assert first["id"] == again["id"] and len(standin.statuses) == 1


async def test_the_atproto_sdk_speaks_to_the_bluesky_standin(aiohttp_server: Any) -> None:
    standin = BlueskyStandIn()
    base = str((await aiohttp_server(standin.app())).make_url("")).rstrip("/")
    client = AsyncClient(base_url=f"{base}/xrpc")
    profile = await client.login("site.bsky.social", standin.password)
    assert profile.handle == "site.bsky.social"
    blob = await client.upload_blob(png())
    assert blob.blob.mime_type == "application/octet-stream" or blob.blob.size > 0
    sent = await client.send_post(text="Hello https://example.com")
    assert sent.uri.startswith("at://did:plc:ewvi7nxzyoun6zhxrhs64oiz/app.bsky.feed.post/")
    assert standin.records[0]["text"] == "Hello https://example.com"
