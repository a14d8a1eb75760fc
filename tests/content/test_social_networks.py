"""LinkedIn, Pinterest, YouTube, Facebook Pages, Instagram and Threads against local
stand-ins (tests/content/social_standins_more.py) through their endpoint overrides."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.content.social_standins_more import (
    ContainerStandIn,
    FacebookStandIn,
    LinkedInStandIn,
    PinterestStandIn,
    StandIn,
    YouTubeStandIn,
)
from tests.content.test_media import png, uploaded

MP4 = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom" + b"\x00" * 4000

# network -> (stand-in factory, authorize path, token path, api path)
NETWORKS: dict[str, tuple[Callable[[], StandIn], str, str, str]] = {
    "linkedin": (LinkedInStandIn, "/oauth/v2/authorization", "/oauth/v2/accessToken", ""),
    "pinterest": (PinterestStandIn, "/oauth/", "/v5/oauth/token", ""),
    "youtube": (YouTubeStandIn, "/o/oauth2/v2/auth", "/token", ""),
    "facebook": (FacebookStandIn, "/v21.0/dialog/oauth", "/v21.0/oauth/access_token", "/v21.0"),
    "instagram": (
        lambda: ContainerStandIn(
            "v21.0", "media", "media_publish", "status_code", "ig_exchange_token"
        ),
        "/oauth/authorize",
        "/oauth/access_token",
        "",
    ),
    "threads": (
        lambda: ContainerStandIn(
            "v1.0", "threads", "threads_publish", "status", "th_exchange_token"
        ),
        "/oauth/authorize",
        "/oauth/access_token",
        "",
    ),
}


async def connect(cms: Any, admin: Any, aiohttp_server: Any, network: str) -> tuple[Any, str]:
    make, authorize, token, api = NETWORKS[network]
    standin = make()
    server = await aiohttp_server(standin.app())  # type: ignore[attr-defined]
    base = str(server.make_url("")).rstrip("/")
    resp = await cms.put(
        f"/api/social/settings/{network}",
        json={
            "clientId": standin.client_id,
            "clientSecret": standin.client_secret,
            "endpoints": {"authorize": base + authorize, "token": base + token, "api": base + api},
        },
        headers=admin.headers,
    )
    assert resp.status == 200, await resp.text()
    start = await cms.post(
        f"/api/social/accounts/{network}/start", json={"returnTo": "/done"}, headers=admin.headers
    )
    assert start.status == 200, await start.text()
    async with cms.session.get((await start.json())["url"], allow_redirects=False) as consent:
        back = urlsplit(consent.headers["Location"])
    done = await cms.get(f"{back.path}?{back.query}", allow_redirects=False)
    assert done.status == 303, await done.text()
    where = urlsplit(done.headers["Location"])
    assert where.path == "/done", where
    query = parse_qs(where.query)
    assert query["social"] == ["connected"], query
    return standin, query["account"][0]


async def publish(
    cms: Any, editor: Any, runtime: Any, body: dict[str, Any], rounds: int = 1
) -> dict[str, Any]:
    created = await cms.post("/api/social/posts", json=body, headers=editor.headers)
    assert created.status == 201, await created.text()
    post = await created.json()
    await cms.post(f"/api/social/posts/{post['id']}/publish", headers=editor.headers)
    for _ in range(rounds):
        await runtime.jobs.run_due()
    return await (await cms.get(f"/api/social/posts/{post['id']}", headers=editor.headers)).json()  # type: ignore[no-any-return]


async def test_linkedin_posts_with_its_version_header_and_escapes_commentary(
    cms, team, runtime, aiohttp_server
):
    standin, _ = await connect(cms, team["admin"], aiohttp_server, "linkedin")
    image = await uploaded(
        cms, team["editor"], png(), filename="a.png", content_type="image/png", alt="Chart"
    )
    post = await publish(
        cms, team["editor"], runtime, {"text": "Q1 results (draft) #growth", "media": [image["id"]]}
    )
    target = post["targets"][0]
    assert post["status"] == "published", target
    assert target["url"].startswith("https://www.linkedin.com/feed/update/urn:li:share:")
    sent = standin.posts[0]
    assert sent["author"] == "urn:li:person:782bbtaQ"
    assert sent["commentary"] == r"Q1 results \(draft\) \#growth"
    assert (
        sent["content"]["media"]["id"].startswith("urn:li:image:")
        and sent["content"]["media"]["altText"] == "Chart"
    )
    # Revoked: the network's words, and the account needs attention.
    standin.access.clear()
    standin.refresh_tokens.clear()
    failed = await publish(cms, team["editor"], runtime, {"text": "Again"})
    assert failed["targets"][0]["errorKind"] == "reconnect"
    assert (
        failed["targets"][0]["error"]
        == "The token used in the request has been revoked by the user"
    )


async def test_pinterest_pins_an_image_to_the_first_board_and_needs_media(
    cms, team, runtime, aiohttp_server
):
    standin, _ = await connect(cms, team["admin"], aiohttp_server, "pinterest")
    refused = await cms.post(
        "/api/social/posts", json={"text": "No picture"}, headers=team["editor"].headers
    )
    body = await refused.json()
    assert refused.status == 400 and body["code"] == "SOCIAL_INVALID"
    assert body["details"]["fields"] == [
        {"key": "media", "message": "pinterest: needs an image or a video"}
    ]
    image = await uploaded(cms, team["editor"], png(), filename="pin.png", content_type="image/png")
    standin.fail_next(
        429,
        {"code": 8, "message": "You have exceeded your rate limit. Try again later."},
        **{"Retry-After": "120"},
    )
    post = await publish(
        cms,
        team["editor"],
        runtime,
        {"text": "Pin me", "link": "https://example.com/p", "media": [image["id"]]},
    )
    target = post["targets"][0]
    assert (
        target["status"] == "retrying"
        and target["error"] == "You have exceeded your rate limit. Try again later."
    )
    runtime.clock.advance(seconds=119)
    await runtime.jobs.run_due()
    assert standin.posts == []
    runtime.clock.advance(seconds=1)
    await runtime.jobs.run_due()
    pin = standin.posts[0]
    assert pin["board_id"] == "549755885175" and pin["link"] == "https://example.com/p"
    assert pin["media_source"] == {"source_type": "image_url", "url": image["url"]}


async def test_youtube_resumable_upload_quota_retry_and_refresh(
    cms, team, runtime, aiohttp_server, clock
):
    standin, _ = await connect(cms, team["admin"], aiohttp_server, "youtube")
    video = await uploaded(cms, team["editor"], MP4, filename="clip.mp4", content_type="video/mp4")
    no_title = await cms.post(
        "/api/social/posts",
        json={"text": "x" * 101, "media": [video["id"]]},
        headers=team["editor"].headers,
    )
    assert [f["message"] for f in (await no_title.json())["details"]["fields"]] == [
        "youtube: the title (first line) is 100 at most"
    ]
    standin.fail_next(
        403,
        {
            "error": {
                "code": 403,
                "message": "The request cannot be completed because you have exceeded your quota.",
                "errors": [{"reason": "quotaExceeded", "domain": "youtube.quota"}],
            }
        },
    )
    post = await publish(
        cms, team["editor"], runtime, {"text": "Launch video\nAll about it", "media": [video["id"]]}
    )
    assert post["targets"][0]["status"] == "retrying" and post["targets"][0]["errorKind"] == "retry"
    clock.advance(hours=2)  # past the access token's hour: refreshed before the retry
    await runtime.jobs.run_due()
    after = await (
        await cms.get(f"/api/social/posts/{post['id']}", headers=team["editor"].headers)
    ).json()
    assert after["status"] == "published" and standin.refreshed == 1
    assert after["targets"][0]["url"].startswith("https://www.youtube.com/watch?v=")
    meta = standin.posts[0]
    assert meta["snippet"] == {"title": "Launch video", "description": "All about it"}


async def test_facebook_connects_pages_and_posts_photos_by_public_url(
    cms, team, runtime, aiohttp_server
):
    standin, account = await connect(cms, team["admin"], aiohttp_server, "facebook")
    image = await uploaded(cms, team["editor"], png(), filename="a.png", content_type="image/png")
    post = await publish(
        cms,
        team["editor"],
        runtime,
        {"text": "Open day", "link": "https://example.com/open", "media": [image["id"]]},
    )
    assert post["status"] == "published", post["targets"]
    feed = standin.posts[0]
    assert feed["message"] == "Open day" and feed["link"] == "https://example.com/open"
    assert feed["attached_media[0]"] == '{"media_fbid": "91"}'
    assert standin.photos[0]["url"] == image["url"]
    # Code 190: the Page token is dead; the connection names the Page.
    standin.access.clear()
    failed = await publish(cms, team["editor"], runtime, {"text": "Closed"})
    assert failed["status"] == "failed" and failed["targets"][0]["errorKind"] == "reconnect"
    overview = await (await cms.get("/api/social/overview", headers=team["editor"].headers)).json()
    assert [(a["id"], a["network"]) for a in overview["attention"]] == [(account, "facebook")]


async def test_instagram_container_processing_then_publish(
    cms, team, runtime, aiohttp_server, clock
):
    standin, _ = await connect(cms, team["admin"], aiohttp_server, "instagram")
    assert isinstance(standin, ContainerStandIn)
    standin.processing_polls = 1
    image = await uploaded(cms, team["editor"], png(), filename="a.png", content_type="image/png")
    post = await publish(
        cms,
        team["editor"],
        runtime,
        {"text": "Caption", "link": "https://example.com", "media": [image["id"]]},
    )
    assert post["status"] == "publishing" and post["targets"][0]["status"] == "processing"
    clock.advance(seconds=10)
    await runtime.jobs.run_due()
    done = await (
        await cms.get(f"/api/social/posts/{post['id']}", headers=team["editor"].headers)
    ).json()
    assert done["status"] == "published" and done["targets"][0]["url"].startswith(
        "https://example.social/p/"
    )
    assert (
        standin.posts[0]["caption"] == "Caption" and standin.posts[0]["image_url"] == image["url"]
    )


async def test_threads_text_post_bad_content_and_token_refresh(
    cms, team, runtime, aiohttp_server, clock, person
):
    standin, _ = await connect(cms, team["admin"], aiohttp_server, "threads")
    standin.fail_next(
        400,
        {
            "error": {
                "message": "Param text must be at most 500 characters long.",
                "type": "THApiException",
                "code": 100,
            }
        },
    )
    refused = await publish(cms, team["editor"], runtime, {"text": "Hello"})
    assert refused["status"] == "failed" and refused["targets"][0]["errorKind"] == "content"
    assert refused["targets"][0]["error"] == "Param text must be at most 500 characters long."
    clock.advance(days=61)  # past the long-lived token's 60 days (and the sessions' 30)
    ok = await publish(
        cms, await person("editor"), runtime, {"text": "Hello again", "link": "https://example.com"}
    )
    assert ok["status"] == "published" and standin.refreshed == 1
    assert (
        standin.posts[0]["text"] == "Hello again\n\nhttps://example.com"
        and standin.posts[0]["media_type"] == "TEXT"
    )


@pytest.mark.parametrize("network", sorted(NETWORKS))
async def test_a_wrong_state_is_refused_for_every_network(cms, team, aiohttp_server, network):
    await connect(cms, team["admin"], aiohttp_server, network)
    start = await cms.post(
        f"/api/social/accounts/{network}/start", json={}, headers=team["admin"].headers
    )
    url = (await start.json())["url"]
    state = parse_qs(urlsplit(url).query)["state"][0]
    wrong = await cms.get(
        f"/social/oauth/callback?state={state[:-2]}xx&code=abc", allow_redirects=False
    )
    assert wrong.status == 400 and (await wrong.json())["code"] == "SOCIAL_STATE_INVALID"


async def test_linkedin_video_goes_up_in_parts_and_is_finalized_before_the_post(
    cms, team, runtime, aiohttp_server
):
    standin, _ = await connect(cms, team["admin"], aiohttp_server, "linkedin")
    assert isinstance(standin, LinkedInStandIn)
    data = MP4 + bytes(range(256)) * (LinkedInStandIn.PART // 256)  # two parts
    video = await uploaded(cms, team["editor"], data, filename="v.mp4", content_type="video/mp4")
    post = await publish(cms, team["editor"], runtime, {"text": "Watch", "media": [video["id"]]})
    assert post["status"] == "published", post["targets"][0]["error"]
    [(urn, sent)] = standin.videos_sent.items()
    assert sent["owner"] == "urn:li:person:782bbtaQ" and sent["size"] == len(data)
    assert [len(part) for part in sent["parts"].values()] == [
        LinkedInStandIn.PART,
        len(data) - LinkedInStandIn.PART,
    ]
    assert b"".join(sent["parts"].values()) == data and sent["finalized"] == len(data)
    assert standin.posts[0]["content"] == {"media": {"id": urn}}
    assert standin.posts[0]["commentary"] == "Watch"


async def test_facebook_posts_a_page_video_by_its_public_url(cms, team, runtime, aiohttp_server):
    standin, _ = await connect(cms, team["admin"], aiohttp_server, "facebook")
    assert isinstance(standin, FacebookStandIn)
    video = await uploaded(cms, team["editor"], MP4, filename="v.mp4", content_type="video/mp4")
    standin.fail_next(
        400,
        {
            "error": {
                "message": "(#6000) There was a problem uploading your video file.",
                "type": "OAuthException",
                "code": 6000,
            }
        },
    )
    refused = await publish(cms, team["editor"], runtime, {"text": "Tour", "media": [video["id"]]})
    assert refused["status"] == "failed" and refused["targets"][0]["error"] == (
        "(#6000) There was a problem uploading your video file."
    )
    post = await publish(
        cms,
        team["editor"],
        runtime,
        {"text": "Tour", "link": "https://example.com/tour", "media": [video["id"]]},
    )
    assert post["status"] == "published", post["targets"][0]["error"]
    [sent] = standin.videos
    assert sent["page"] == "1020304050" and sent["file_url"] == video["url"]
    assert sent["description"] == "Tour\n\nhttps://example.com/tour"  # no link field on /videos
    assert post["targets"][0]["url"] == "https://www.facebook.com/1020304050/videos/10158000001"
    assert standin.posts == [] and standin.photos == []


async def test_pinterest_video_registers_uploads_waits_for_processing_then_pins(
    cms, team, runtime, aiohttp_server, clock
):
    standin, _ = await connect(cms, team["admin"], aiohttp_server, "pinterest")
    assert isinstance(standin, PinterestStandIn)
    standin.processing_polls = 1  # the first status check still says processing
    video = await uploaded(
        cms, team["editor"], MP4, filename="v.mp4", content_type="video/mp4", alt="Spring"
    )
    post = await publish(
        cms,
        team["editor"],
        runtime,
        {"text": "Spring tour", "link": "https://example.com/s", "media": [video["id"]]},
    )
    assert post["status"] == "publishing" and post["targets"][0]["status"] == "processing"
    assert standin.posts == []
    [(media_id, media)] = standin.media.items()
    assert media["fields"]["file"] == MP4 and media["fields"]["key"] == b"uploads/%s.mp4" % (
        media_id.encode()
    )
    assert list(media["fields"])[-1] == "file"
    clock.advance(seconds=10)
    await runtime.jobs.run_due()
    done = await (
        await cms.get(f"/api/social/posts/{post['id']}", headers=team["editor"].headers)
    ).json()
    assert done["status"] == "published", done["targets"][0]["error"]
    assert done["targets"][0]["url"].startswith("https://www.pinterest.com/pin/")
    [pin] = standin.posts
    assert pin["media_source"] == {
        "source_type": "video_id",
        "media_id": media_id,
        "cover_image_key_frame_time": 0,
    }
    assert pin["board_id"] == "549755885175" and pin["link"] == "https://example.com/s"
    assert pin["description"] == "Spring tour" and pin["alt_text"] == "Spring"


@pytest.mark.parametrize(
    ("network", "count", "caption", "item_type"),
    [("instagram", 2, "caption", None), ("threads", 3, "text", "IMAGE")],
)
async def test_carousel_makes_item_containers_then_the_carousel_then_publishes_it(
    cms, team, runtime, aiohttp_server, clock, network, count, caption, item_type
):
    standin, _ = await connect(cms, team["admin"], aiohttp_server, network)
    assert isinstance(standin, ContainerStandIn)
    standin.processing_polls = 1  # every container says IN_PROGRESS once
    images = [
        await uploaded(
            cms, team["editor"], png(), filename=f"{i}.png", content_type="image/png", alt=f"n{i}"
        )
        for i in range(count)
    ]
    post = await publish(
        cms, team["editor"], runtime, {"text": "Album", "media": [i["id"] for i in images]}
    )
    assert post["targets"][0]["status"] == "processing", post["targets"][0]["error"]
    clock.advance(seconds=10)
    await runtime.jobs.run_due()
    done = await (
        await cms.get(f"/api/social/posts/{post['id']}", headers=team["editor"].headers)
    ).json()
    assert done["status"] == "published", done["targets"][0]["error"]
    [*items, carousel] = standin.containers.values()
    assert [(c["image_url"], c["is_carousel_item"], c.get("media_type")) for c in items] == [
        (i["url"], "true", item_type) for i in images
    ]
    assert [c.get(caption) for c in items] == [None] * count
    assert carousel["media_type"] == "CAROUSEL" and carousel[caption] == "Album"
    assert carousel["children"] == ",".join(list(standin.containers)[:count])
    assert standin.posts == [carousel]
    assert done["targets"][0]["url"] == f"https://example.social/p/{90010001}"
