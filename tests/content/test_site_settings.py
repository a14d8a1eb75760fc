"""Site settings under /api/settings: read with content.read, change with settings.manage."""

from __future__ import annotations

from content.service import CONTENT_VERSION
from content.site.service import delivery_settings
from tests.content.factories import bearer, make_agent_key, make_media


async def test_read_with_content_read_and_change_with_settings_manage(cms, team, runtime, clock):
    fresh = await (await cms.get("/api/settings", headers=team["viewer"].headers)).json()
    assert {k: fresh[k] for k in ("title", "tagline", "description", "logo", "socialImage")} == {
        "title": "",
        "tagline": "",
        "description": "",
        "logo": None,
        "socialImage": None,
    }
    logo = await make_media(runtime.db, clock)
    social = await make_media(runtime.db, clock)
    body = {"title": "My Site", "tagline": "Hello", "logo": logo, "socialImage": social}
    for role in ("viewer", "author", "editor"):
        resp = await cms.patch("/api/settings", json=body, headers=team[role].headers)
        assert resp.status == 403
        assert set(await resp.json()) == {"error", "code", "details"}
    key = await make_agent_key(runtime.db, clock, team["admin"].id, ["content.read"])
    assert (await cms.patch("/api/settings", json=body, headers=bearer(key))).status == 403

    version = cms.app[CONTENT_VERSION]()
    resp = await cms.patch("/api/settings", json=body, headers=team["admin"].headers)
    assert resp.status == 200
    saved = await resp.json()
    assert saved["title"] == "My Site" and saved["logo"] == logo
    assert saved["socialImage"] == social and saved["description"] == ""
    assert cms.app[CONTENT_VERSION]() == version + 1
    # A PATCH changes only what it names; null clears a media setting.
    cleared = await cms.patch(
        "/api/settings", json={"socialImage": None}, headers=team["owner"].headers
    )
    after = await cleared.json()
    assert after["socialImage"] is None and after["title"] == "My Site"
    # Saving what is already there changes nothing: no activity, no new version.
    await cms.patch("/api/settings", json={"title": "My Site"}, headers=team["owner"].headers)
    assert cms.app[CONTENT_VERSION]() == version + 2
    activity = await (
        await cms.get("/api/activity?subjectKind=settings", headers=team["viewer"].headers)
    ).json()
    assert [(a["action"], a["summary"]["fields"]) for a in activity["data"]] == [
        ("settings.updated", ["socialImage"]),
        ("settings.updated", ["logo", "socialImage", "tagline", "title"]),
    ]
    got = await (await cms.get("/api/settings", headers=team["viewer"].headers)).json()
    assert got["title"] == "My Site" and got["tagline"] == "Hello"


async def test_invalid_settings_name_each_field(cms, team):
    resp = await cms.patch(
        "/api/settings",
        json={"title": "x" * 201, "logo": "not a media id!", "socialImage": 5, "theme": "dark"},
        headers=team["admin"].headers,
    )
    assert resp.status == 400
    error = await resp.json()
    assert error["code"] == "VALIDATION_FAILED"
    assert {f["key"] for f in error["details"]["fields"]} == {
        "title",
        "logo",
        "socialImage",
        "theme",
    }


async def test_media_settings_name_image_media_of_the_library(cms, team, runtime, clock):
    pdf = await make_media(runtime.db, clock, media_type="application/pdf")
    resp = await cms.patch(
        "/api/settings",
        json={"logo": "nosuchmedia1", "socialImage": pdf},
        headers=team["admin"].headers,
    )
    assert resp.status == 400
    problems = {f["key"]: f["message"] for f in (await resp.json())["details"]["fields"]}
    assert "no media" in problems["logo"]
    assert "must be an image" in problems["socialImage"]


async def test_delivery_settings_resolve_media_ids_to_urls(cms, team, runtime, clock):
    logo = await make_media(runtime.db, clock)
    gone = await make_media(runtime.db, clock)
    await cms.patch(
        "/api/settings",
        json={"title": "T", "logo": logo, "socialImage": gone},
        headers=team["admin"].headers,
    )
    # Media deleted after it was chosen reads as null on delivery.
    await runtime.db.execute("DELETE FROM content.media WHERE id = %s", (gone,))
    async with runtime.db.connection() as conn:
        settings = await delivery_settings(conn)
    assert settings["title"] == "T"
    assert settings["logo"] == f"http://x/{logo}"
    assert settings["socialImage"] is None
