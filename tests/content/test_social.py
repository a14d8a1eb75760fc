"""Social publishing against local stand-ins of X and Bluesky (tests/content/social_standins.py)."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from content.plugins import HookEvent, Plugin, PluginContext
from content.social.plans import outcome
from gateway.app import build_app
from tests.content.factories import make_agent_key
from tests.content.social_standins import BlueskyStandIn, MastodonStandIn, XStandIn
from tests.content.test_media import png, uploaded


@pytest.fixture
async def x(aiohttp_server: Any) -> tuple[XStandIn, str]:
    standin = XStandIn()
    server = await aiohttp_server(standin.app())
    return standin, str(server.make_url("")).rstrip("/")


@pytest.fixture
async def bsky(aiohttp_server: Any) -> tuple[BlueskyStandIn, str]:
    standin = BlueskyStandIn()
    server = await aiohttp_server(standin.app())
    return standin, str(server.make_url("")).rstrip("/")


async def connect_x(cms: Any, admin: Any, x: tuple[XStandIn, str]) -> str:
    standin, base = x
    resp = await cms.put(
        "/api/social/settings/x",
        json={
            "clientId": standin.client_id,
            "clientSecret": standin.client_secret,
            "endpoints": {
                "authorize": f"{base}/i/oauth2/authorize",
                "token": f"{base}/2/oauth2/token",
                "api": base,
            },
        },
        headers=admin.headers,
    )
    assert resp.status == 200, await resp.text()
    start = await cms.post("/api/social/accounts/x/start", json={}, headers=admin.headers)
    assert start.status == 200, await start.text()
    url = (await start.json())["url"]
    # The browser at the network's consent: it approves and is sent back.
    async with cms.session.get(url, allow_redirects=False) as consent:
        back = urlsplit(consent.headers["Location"])
    assert back.path == "/social/oauth/callback"
    done = await cms.get(f"{back.path}?{back.query}", allow_redirects=False)
    assert done.status == 303, await done.text()
    query = parse_qs(urlsplit(done.headers["Location"]).query)
    assert query["social"] == ["connected"]
    return query["account"][0]


async def connect_bsky(cms: Any, admin: Any, bsky: tuple[BlueskyStandIn, str]) -> str:
    standin, base = bsky
    resp = await cms.post(
        "/api/social/accounts/bluesky/start",
        json={"identifier": "site.bsky.social", "password": standin.password, "service": base},
        headers=admin.headers,
    )
    assert resp.status == 200, await resp.text()
    body = await resp.json()
    assert body["url"] is None
    return str(body["account"]["id"])


async def test_x_connect_uses_pkce_and_a_wrong_state_is_refused(cms, team, x):
    admin = team["admin"]
    account_id = await connect_x(cms, admin, x)
    accounts = await (await cms.get("/api/social/accounts", headers=admin.headers)).json()
    row = next(n for n in accounts["data"] if n["network"] == "x")
    assert row["hasApp"] and row["accounts"][0]["id"] == account_id
    assert row["accounts"][0]["handle"] == "oursite"
    settings = await (await cms.get("/api/social/settings", headers=admin.headers)).json()
    xs = next(n for n in settings["data"] if n["network"] == "x")
    assert xs["secret"] == "…abcd" and xs["source"] == "settings"
    assert "x-secret" not in str(settings)
    # A forged state, and a replayed one, are refused.
    forged = await cms.get("/social/oauth/callback?state=forged&code=abc", allow_redirects=False)
    assert forged.status == 400 and (await forged.json())["code"] == "SOCIAL_STATE_INVALID"
    start = await cms.post("/api/social/accounts/x/start", json={}, headers=admin.headers)
    url = (await start.json())["url"]
    async with cms.session.get(url, allow_redirects=False) as consent:
        back = urlsplit(consent.headers["Location"])
    first = await cms.get(f"{back.path}?{back.query}", allow_redirects=False)
    assert first.status == 303
    again = await cms.get(f"{back.path}?{back.query}", allow_redirects=False)
    assert again.status == 400
    # Absent clientSecret keeps it; an empty string clears it.
    await cms.put("/api/social/settings/x", json={"clientId": "x-client"}, headers=admin.headers)
    kept = await (await cms.get("/api/social/settings", headers=admin.headers)).json()
    assert next(n for n in kept["data"] if n["network"] == "x")["secret"] == "…abcd"
    await cms.put("/api/social/settings/x", json={"clientSecret": ""}, headers=admin.headers)
    cleared = await (await cms.get("/api/social/settings", headers=admin.headers)).json()
    assert next(n for n in cleared["data"] if n["network"] == "x")["secret"] is None


async def test_partial_failure_retries_only_the_failed_target(cms, team, x, bsky, runtime, clock):
    admin, editor = team["admin"], team["editor"]
    await connect_x(cms, admin, x)
    await connect_bsky(cms, admin, bsky)
    created = await cms.post(
        "/api/social/posts",
        json={"text": "Spring sale", "link": "https://example.com/sale"},
        headers=team["author"].headers,
    )
    assert created.status == 201, await created.text()
    post = await created.json()
    assert post["status"] == "draft" and len(post["targets"]) == 2
    bsky[0].fail_next(502, {"error": "UpstreamFailure", "message": "Upstream Failure"})
    published = await cms.post(f"/api/social/posts/{post['id']}/publish", headers=editor.headers)
    assert (await published.json())["status"] == "publishing"
    await runtime.jobs.run_due()
    after = await (await cms.get(f"/api/social/posts/{post['id']}", headers=editor.headers)).json()
    by = {t["network"]: t for t in after["targets"]}
    assert by["x"]["status"] == "posted" and by["x"]["url"].startswith(
        "https://x.com/oursite/status/"
    )
    assert by["bluesky"]["status"] == "retrying" and by["bluesky"]["error"] == "Upstream Failure"
    assert by["bluesky"]["errorKind"] == "retry"
    assert after["status"] == "publishing"
    assert x[0].tweets[0]["text"] == "Spring sale\n\nhttps://example.com/sale"
    # Backoff: nothing happens before the next attempt's time.
    await runtime.jobs.run_due()
    assert bsky[0].records == []
    clock.advance(seconds=10)
    await runtime.jobs.run_due()
    done = await (await cms.get(f"/api/social/posts/{post['id']}", headers=editor.headers)).json()
    assert done["status"] == "published"
    assert len(x[0].tweets) == 1, "the posted target was not sent again"
    record = bsky[0].records[0]
    assert record["facets"][0]["features"][0]["uri"] == "https://example.com/sale"
    # Publish again: every target is posted, nothing is sent twice.
    await cms.post(f"/api/social/posts/{post['id']}/publish", headers=editor.headers)
    await runtime.jobs.run_due()
    assert len(x[0].tweets) == 1 and len(bsky[0].records) == 1


async def test_a_refusal_is_final_and_partial(cms, team, x, bsky, runtime):
    admin, editor = team["admin"], team["editor"]
    await connect_x(cms, admin, x)
    await connect_bsky(cms, admin, bsky)
    x[0].fail_next(
        403,
        {
            "detail": "You are not allowed to create a Tweet with duplicate content.",
            "type": "about:blank",
            "title": "Forbidden",
            "status": 403,
        },
    )
    post = await (
        await cms.post("/api/social/posts", json={"text": "Hello"}, headers=editor.headers)
    ).json()
    await cms.post(f"/api/social/posts/{post['id']}/publish", headers=editor.headers)
    await runtime.jobs.run_due()
    after = await (await cms.get(f"/api/social/posts/{post['id']}", headers=editor.headers)).json()
    by = {t["network"]: t for t in after["targets"]}
    assert after["status"] == "partial"
    assert by["x"]["status"] == "failed" and by["x"]["errorKind"] == "content"
    assert by["x"]["error"] == "You are not allowed to create a Tweet with duplicate content."
    listed = await (
        await cms.get("/api/social/posts?status=partial", headers=editor.headers)
    ).json()
    assert [p["id"] for p in listed["data"]] == [post["id"]]


async def test_rate_limit_honours_the_reset_header_and_manual_publish_overrides(
    cms, team, x, runtime, clock
):
    admin, editor = team["admin"], team["editor"]
    await connect_x(cms, admin, x)
    reset = int(clock.now().timestamp()) + 900
    x[0].fail_next(
        429,
        {
            "title": "Too Many Requests",
            "detail": "Too Many Requests",
            "type": "about:blank",
            "status": 429,
        },
        **{"x-rate-limit-reset": str(reset), "x-rate-limit-remaining": "0"},
    )
    post = await (
        await cms.post("/api/social/posts", json={"text": "Later"}, headers=editor.headers)
    ).json()
    await cms.post(f"/api/social/posts/{post['id']}/publish", headers=editor.headers)
    await runtime.jobs.run_due()
    target = (
        await (await cms.get(f"/api/social/posts/{post['id']}", headers=editor.headers)).json()
    )["targets"][0]
    assert target["status"] == "retrying" and target["error"] == "Too Many Requests"
    clock.advance(seconds=60)
    await runtime.jobs.run_due()
    assert x[0].tweets == [], "the reset time is honoured, not the shorter backoff"
    # A manual publish overrides the backoff.
    await cms.post(f"/api/social/posts/{post['id']}/publish", headers=editor.headers)
    await runtime.jobs.run_due()
    assert len(x[0].tweets) == 1
    clock.advance(seconds=900)
    await runtime.jobs.run_due()
    assert len(x[0].tweets) == 1, "the superseded retry does not send again"


async def test_expired_token_is_refreshed_and_a_dead_one_names_the_account(
    cms, team, x, bsky, runtime, clock
):
    admin, editor = team["admin"], team["editor"]
    await connect_x(cms, admin, x)
    clock.advance(hours=3)  # past the access token's two hours
    post = await (
        await cms.post("/api/social/posts", json={"text": "Fresh"}, headers=editor.headers)
    ).json()
    await cms.post(f"/api/social/posts/{post['id']}/publish", headers=editor.headers)
    await runtime.jobs.run_due()
    assert x[0].refreshed == 1 and len(x[0].tweets) == 1
    # Revoked everywhere (access and refresh): the connection needs attention, by name.
    x[0].access.clear()
    x[0].refresh.clear()
    second = await (
        await cms.post("/api/social/posts", json={"text": "Again"}, headers=editor.headers)
    ).json()
    await cms.post(f"/api/social/posts/{second['id']}/publish", headers=editor.headers)
    await runtime.jobs.run_due()
    after = await (
        await cms.get(f"/api/social/posts/{second['id']}", headers=editor.headers)
    ).json()
    assert after["status"] == "failed"
    assert (
        after["targets"][0]["errorKind"] == "reconnect"
        and after["targets"][0]["error"] == "Unauthorized"
    )
    overview = await (await cms.get("/api/social/overview", headers=editor.headers)).json()
    assert [a["handle"] for a in overview["attention"]] == ["oursite"]
    assert overview["counts"]["failed"] == 1 and overview["counts"]["published"] == 1


async def test_scheduled_post_is_sent_when_the_clock_reaches_it(cms, team, bsky, runtime, clock):
    admin, editor = team["admin"], team["editor"]
    await connect_bsky(cms, admin, bsky)
    post = await (
        await cms.post(
            "/api/social/posts", json={"text": "Tomorrow"}, headers=team["author"].headers
        )
    ).json()
    url = f"/api/social/posts/{post['id']}"
    past = await cms.post(
        f"{url}/schedule",
        json={"at": (clock.now() - timedelta(minutes=1)).isoformat()},
        headers=editor.headers,
    )
    assert past.status == 400 and (await past.json())["details"]["fields"][0]["key"] == "at"
    denied = await cms.post(
        f"{url}/schedule",
        json={"at": (clock.now() + timedelta(hours=1)).isoformat()},
        headers=team["author"].headers,
    )
    assert denied.status == 403
    at = clock.now() + timedelta(hours=1)
    scheduled = await cms.post(
        f"{url}/schedule", json={"at": at.isoformat()}, headers=editor.headers
    )
    assert (await scheduled.json())["status"] == "scheduled"
    calendar = await (
        await cms.get(
            f"/api/social/calendar?from={clock.now().date().isoformat()}&days=2",
            headers=editor.headers,
        )
    ).json()
    assert [p["id"] for p in calendar["data"]] == [post["id"]]
    clock.advance(minutes=59)
    await runtime.jobs.run_due()
    assert bsky[0].records == []
    clock.advance(minutes=1)
    await runtime.jobs.run_due()  # the due job queues the targets
    await runtime.jobs.run_due()  # the send
    assert (await (await cms.get(url, headers=editor.headers)).json())["status"] == "published"
    assert bsky[0].records[0]["text"] == "Tomorrow"


async def test_cancel_returns_a_scheduled_post_to_draft(cms, team, bsky, runtime, clock):
    await connect_bsky(cms, team["admin"], bsky)
    editor = team["editor"].headers
    post = await (
        await cms.post("/api/social/posts", json={"text": "Maybe"}, headers=editor)
    ).json()
    url = f"/api/social/posts/{post['id']}"
    await cms.post(
        f"{url}/schedule",
        json={"at": (clock.now() + timedelta(hours=1)).isoformat()},
        headers=editor,
    )
    cancelled = await cms.post(f"{url}/cancel", headers=editor)
    assert (await cancelled.json())["status"] == "draft"
    clock.advance(hours=2)
    await runtime.jobs.run_due()
    await runtime.jobs.run_due()
    assert bsky[0].records == []


async def test_a_post_a_network_would_refuse_is_refused_at_save(cms, team, bsky, x):
    await connect_bsky(cms, team["admin"], bsky)
    await connect_x(cms, team["admin"], x)
    long = "é" * 301
    resp = await cms.post("/api/social/posts", json={"text": long}, headers=team["author"].headers)
    assert resp.status == 400
    body = await resp.json()
    assert body["code"] == "SOCIAL_INVALID"
    messages = {f["message"].split(":")[0] for f in body["details"]["fields"]}
    assert messages == {"bluesky", "x"}
    assert all(f["key"] == "text" for f in body["details"]["fields"])
    # 280 weighted on X: 141 CJK characters weigh 282; Bluesky counts 141 graphemes.
    cjk = await cms.post(
        "/api/social/posts", json={"text": "字" * 141}, headers=team["author"].headers
    )
    fields = (await cjk.json())["details"]["fields"]
    assert [f["message"].split(":")[0] for f in fields] == ["x"]


async def test_put_keeps_posted_targets(cms, team, x, bsky, runtime):
    await connect_x(cms, team["admin"], x)
    await connect_bsky(cms, team["admin"], bsky)
    editor = team["editor"].headers
    bsky[0].fail_next(
        400, {"error": "InvalidRequest", "message": "Invalid app.bsky.feed.post record"}
    )
    post = await (
        await cms.post("/api/social/posts", json={"text": "First"}, headers=editor)
    ).json()
    await cms.post(f"/api/social/posts/{post['id']}/publish", headers=editor)
    await runtime.jobs.run_due()
    edited = await cms.put(
        f"/api/social/posts/{post['id']}", json={"text": "Second"}, headers=editor
    )
    assert edited.status == 200, await edited.text()
    by = {t["network"]: t for t in (await edited.json())["targets"]}
    assert by["x"]["status"] == "posted"
    await cms.post(f"/api/social/posts/{post['id']}/publish", headers=editor)
    await runtime.jobs.run_due()
    assert [t["text"] for t in x[0].tweets] == ["First"]
    assert bsky[0].records[0]["text"] == "Second"
    deleted = await cms.delete(f"/api/social/posts/{post['id']}", headers=editor)
    assert deleted.status == 204
    assert (await cms.get(f"/api/social/posts/{post['id']}", headers=editor)).status == 404
    activity = await (await cms.get("/api/activity", headers=team["admin"].headers)).json()
    actions = {a["action"] for a in activity["data"]}
    assert {
        "social.post.created",
        "social.post.sent",
        "social.post.failed",
        "social.account.connected",
    } <= actions


async def test_permissions_per_role_and_no_key(cms, team, runtime, clock, bsky):
    author, editor, admin, viewer = team["author"], team["editor"], team["admin"], team["viewer"]
    assert (await cms.get("/api/social/posts", headers=viewer.headers)).status == 403
    assert (await cms.get("/api/social/posts", headers=author.headers)).status == 200
    assert (await cms.get("/api/social/settings", headers=editor.headers)).status == 403
    assert (
        await cms.post("/api/social/accounts/bluesky/start", json={}, headers=editor.headers)
    ).status == 403
    assert (await cms.get("/api/social/settings", headers=admin.headers)).status == 200
    post = await (
        await cms.post("/api/social/posts", json={"text": "x"}, headers=author.headers)
    ).json()
    assert (
        await cms.post(f"/api/social/posts/{post['id']}/publish", headers=author.headers)
    ).status == 403
    # No key, whatever it is granted, reaches a social route; connecting is never a key's.
    key = await make_agent_key(
        runtime.db, clock, team["owner"].id, ["social.write", "social.publish", "social.manage"]
    )
    for method, path in (
        ("GET", "/api/social/posts"),
        ("POST", "/api/social/accounts/bluesky/start"),
        ("GET", "/api/social/settings"),
    ):
        resp = await cms.request(method, path, json={}, headers={"Authorization": f"Bearer {key}"})
        assert resp.status == 403 and (await resp.json())["code"] == "KEY_FORBIDDEN", path


@pytest.fixture
async def masto(aiohttp_server: Any) -> tuple[MastodonStandIn, str]:
    standin = MastodonStandIn()
    server = await aiohttp_server(standin.app())
    return standin, str(server.make_url("")).rstrip("/")


async def connect_masto(cms: Any, admin: Any, masto: tuple[MastodonStandIn, str]) -> str:
    _, base = masto
    start = await cms.post(
        "/api/social/accounts/mastodon/start", json={"instance": base}, headers=admin.headers
    )
    assert start.status == 200, await start.text()
    async with cms.session.get((await start.json())["url"], allow_redirects=False) as consent:
        back = urlsplit(consent.headers["Location"])
    done = await cms.get(f"{back.path}?{back.query}", allow_redirects=False)
    assert done.status == 303, await done.text()
    return parse_qs(urlsplit(done.headers["Location"]).query)["account"][0]


async def test_mastodon_registers_once_per_instance_and_sends_media_with_an_idempotency_key(
    cms, team, masto, x, runtime
):
    admin, editor = team["admin"], team["editor"]
    await connect_masto(cms, admin, masto)
    await connect_masto(cms, admin, masto)
    assert len(masto[0].apps) == 1, "the app is registered once per instance"
    await connect_x(cms, admin, x)
    image = await uploaded(
        cms, editor, png(), filename="sale.png", content_type="image/png", alt="A sale"
    )
    post = await (
        await cms.post(
            "/api/social/posts",
            json={"text": "With a picture", "media": [image["id"]]},
            headers=editor.headers,
        )
    ).json()
    assert len(post["targets"]) == 2
    await cms.post(f"/api/social/posts/{post['id']}/publish", headers=editor.headers)
    await runtime.jobs.run_due()
    after = await (await cms.get(f"/api/social/posts/{post['id']}", headers=editor.headers)).json()
    assert after["status"] == "published", after
    (status,) = masto[0].statuses.values()
    assert status["content"] == "With a picture" and len(status["media_ids"]) == 1
    by = {t["network"]: t for t in after["targets"]}
    assert by["mastodon"]["url"] == status["url"]
    assert x[0].tweets[0]["media"]["media_ids"] and all(n > 0 for n in x[0].media.values())


async def test_mastodon_rate_limit_reset_is_an_iso_time(cms, team, masto, runtime, clock):
    admin, editor = team["admin"], team["editor"]
    await connect_masto(cms, admin, masto)
    reset = (clock.now() + timedelta(minutes=30)).isoformat()
    masto[0].fail_next(429, {"error": "Too many requests"}, **{"X-RateLimit-Reset": reset})
    post = await (
        await cms.post("/api/social/posts", json={"text": "Slow"}, headers=editor.headers)
    ).json()
    await cms.post(f"/api/social/posts/{post['id']}/publish", headers=editor.headers)
    await runtime.jobs.run_due()
    target = (
        await (await cms.get(f"/api/social/posts/{post['id']}", headers=editor.headers)).json()
    )["targets"][0]
    assert target["status"] == "retrying" and target["error"] == "Too many requests"
    assert target["nextAttemptAt"].startswith(reset[:16])
    clock.advance(minutes=30)
    await runtime.jobs.run_due()
    assert len(masto[0].statuses) == 1


async def test_the_callback_answers_at_the_root_and_under_the_cms_mount(
    gateway_client, runtime, clock
):
    for path in ("/social/oauth/callback", "/cms/social/oauth/callback"):
        resp = await gateway_client.get(f"{path}?state=forged&code=abc", allow_redirects=False)
        assert resp.status == 400, path
        assert (await resp.json())["code"] == "SOCIAL_STATE_INVALID"


async def test_environment_fallback_connects_and_posts_through_the_api_url(
    runtime, aiohttp_client, team, x
):
    standin, base = x
    environ = {
        "SOCIAL_OAUTH_X_CLIENT_ID": standin.client_id,
        "SOCIAL_OAUTH_X_CLIENT_SECRET": standin.client_secret,
        "SOCIAL_OAUTH_X_AUTHORIZE_URL": f"{base}/i/oauth2/authorize",
        "SOCIAL_OAUTH_X_TOKEN_URL": f"{base}/2/oauth2/token",
        "SOCIAL_OAUTH_X_SCOPES": "tweet.read,tweet.write,users.read,offline.access",
        "SOCIAL_X_API_URL": base,
    }
    configured = dataclasses.replace(
        runtime, settings=dataclasses.replace(runtime.settings, environ=environ)
    )
    cms = await aiohttp_client(build_app(configured, only="content"))
    admin = team["admin"]
    settings = await (await cms.get("/api/social/settings", headers=admin.headers)).json()
    row = next(n for n in settings["data"] if n["network"] == "x")
    assert row["source"] == "environment" and row["clientId"] == standin.client_id
    assert row["secret"] is None, "an environment secret is never shown"
    start = await cms.post("/api/social/accounts/x/start", json={}, headers=admin.headers)
    url = (await start.json())["url"]
    assert parse_qs(urlsplit(url).query)["scope"] == [
        "tweet.read tweet.write users.read offline.access"
    ]
    async with cms.session.get(url, allow_redirects=False) as consent:
        back = urlsplit(consent.headers["Location"])
    done = await cms.get(f"{back.path}?{back.query}", allow_redirects=False)
    assert parse_qs(urlsplit(done.headers["Location"]).query)["social"] == ["connected"]
    editor = team["editor"].headers
    post = await (
        await cms.post("/api/social/posts", json={"text": "From env"}, headers=editor)
    ).json()
    await cms.post(f"/api/social/posts/{post['id']}/publish", headers=editor)
    await runtime.jobs.run_due()
    assert [t["text"] for t in standin.tweets] == ["From env"]


async def test_a_plugin_plan_mirrors_its_core_post(start, team, runtime, bsky):
    mirrored: dict[str, Any] = {}

    async def mirror(event: HookEvent, ctx: PluginContext) -> None:
        post = await outcome(ctx.db, event.data["socialPost"])
        assert post is not None
        mirrored[event.name] = (
            post["status"],
            [(t["network"], t["status"], t["error"]) for t in post["targets"]],
        )

    planner = Plugin(
        name="planner",
        version="1",
        hooks={
            "social.post.sent": mirror,
            "social.post.failed": mirror,
            "social.post.retrying": mirror,
        },
    )
    service, cms = await start(plugins=[planner])
    enable = await cms.patch(
        "/api/plugins/planner", json={"enabled": True}, headers=team["admin"].headers
    )
    assert enable.status == 200, await enable.text()
    await connect_bsky(cms, team["admin"], bsky)
    editor = team["editor"].headers
    bsky[0].fail_next(
        400, {"error": "InvalidRequest", "message": "Invalid app.bsky.feed.post record"}
    )
    post = await (
        await cms.post("/api/social/posts", json={"text": "Planned"}, headers=editor)
    ).json()
    await cms.post(f"/api/social/posts/{post['id']}/publish", headers=editor)
    await runtime.jobs.run_due()
    await service.plugins.idle()
    assert mirrored["social.post.failed"] == (
        "failed",
        [("bluesky", "failed", "Invalid app.bsky.feed.post record")],
    )
    await cms.post(f"/api/social/posts/{post['id']}/publish", headers=editor)
    await runtime.jobs.run_due()
    await service.plugins.idle()
    assert mirrored["social.post.sent"] == ("published", [("bluesky", "posted", None)])


async def test_return_to_must_be_a_path_of_this_site(cms, team, x):
    await cms.put(
        "/api/social/settings/x", json={"clientId": "x-client"}, headers=team["admin"].headers
    )
    for bad in ("https://evil.example/", "//evil.example/", "/\\evil"):
        resp = await cms.post(
            "/api/social/accounts/x/start", json={"returnTo": bad}, headers=team["admin"].headers
        )
        assert resp.status == 400
        assert (await resp.json())["details"]["fields"][0]["key"] == "returnTo"


MP4 = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom" + b"\x00" * 4000


async def test_x_video_still_processing_is_checked_by_status_not_uploaded_again(
    cms, team, x, runtime, clock
):
    standin, _ = x
    await connect_x(cms, team["admin"], x)
    standin.processing_polls = 2  # pending at finalize, in_progress at the first STATUS
    video = await uploaded(cms, team["editor"], MP4, filename="v.mp4", content_type="video/mp4")
    created = await cms.post(
        "/api/social/posts",
        json={"text": "Clip", "media": [video["id"]]},
        headers=team["editor"].headers,
    )
    post = await created.json()
    await cms.post(f"/api/social/posts/{post['id']}/publish", headers=team["editor"].headers)
    await runtime.jobs.run_due()
    clock.advance(seconds=1)  # finalize's check_after_secs
    await runtime.jobs.run_due()
    url = f"/api/social/posts/{post['id']}"
    mid = await (await cms.get(url, headers=team["editor"].headers)).json()
    assert mid["status"] == "publishing" and mid["targets"][0]["status"] == "processing"
    assert standin.status_checks == 1 and standin.tweets == []
    clock.advance(seconds=10)  # the STATUS answer's check_after_secs
    await runtime.jobs.run_due()
    done = await (await cms.get(url, headers=team["editor"].headers)).json()
    assert done["status"] == "published", done["targets"][0]["error"]
    [media_id] = standin.media  # uploaded once
    assert standin.tweets[0]["media"] == {"media_ids": [media_id]} and standin.status_checks == 2


async def test_mastodon_media_still_processing_is_asked_for_until_its_url_is_set(
    cms, team, masto, runtime, clock
):
    standin, _ = masto
    await connect_masto(cms, team["admin"], masto)
    standin.processing_polls = 1  # the first GET /api/v1/media/:id answers 206, url null
    image = await uploaded(cms, team["editor"], png(), filename="a.png", content_type="image/png")
    created = await cms.post(
        "/api/social/posts",
        json={"text": "Picture", "media": [image["id"]]},
        headers=team["editor"].headers,
    )
    post = await created.json()
    await cms.post(f"/api/social/posts/{post['id']}/publish", headers=team["editor"].headers)
    await runtime.jobs.run_due()
    url = f"/api/social/posts/{post['id']}"
    mid = await (await cms.get(url, headers=team["editor"].headers)).json()
    assert mid["targets"][0]["status"] == "processing" and standin.statuses == {}
    clock.advance(seconds=5)
    await runtime.jobs.run_due()
    done = await (await cms.get(url, headers=team["editor"].headers)).json()
    assert done["status"] == "published", done["targets"][0]["error"]
    (status,) = standin.statuses.values()
    assert status["media_ids"] == list(standin.media) and standin.uploads == 1
