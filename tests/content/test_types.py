"""Content types under /api/types: definitions, permissions, changes."""

from __future__ import annotations

from content.types.fields import FIELD_TYPES
from tests.content.factories import bearer, make_agent_key

ARTICLE = {
    "name": "article",
    "label": "Article",
    "previewUrl": "https://site.example/{locale}/articles/{slug}",
    "fields": [
        {"key": "summary", "type": "textarea", "required": True, "maxLength": 300},
        {"key": "heroImage", "type": "media"},
        {"key": "rating", "type": "number", "min": 0, "max": 5, "integer": True},
        {
            "key": "tags",
            "type": "multiselect",
            "options": ["news", {"value": "howto", "label": "How-to"}],
        },
        {
            "key": "sections",
            "type": "list",
            "fields": [
                {"key": "title", "type": "text", "required": True},
                {"key": "items", "type": "list", "fields": [{"key": "link", "type": "url"}]},
            ],
        },
    ],
}


async def test_eighteen_field_types_with_editor_metadata(cms, team):
    resp = await cms.get("/api/field-types", headers=team["viewer"].headers)
    data = (await resp.json())["data"]
    assert len(data) == 18 == len(FIELD_TYPES)
    by_type = {d["type"]: d for d in data}
    assert by_type["number"]["options"].keys() >= {"min", "max", "required"}
    assert by_type["list"]["editor"] == "repeater"
    assert by_type["multiselect"]["empty"] == [] and by_type["number"]["empty"] is None
    assert by_type["text"]["empty"] == "" and by_type["boolean"]["empty"] is False


async def test_crud_and_permissions(cms, team):
    for role in ("viewer", "author", "editor"):
        resp = await cms.post("/api/types", json=ARTICLE, headers=team[role].headers)
        assert resp.status == 403
    resp = await cms.post("/api/types", json=ARTICLE, headers=team["admin"].headers)
    assert resp.status == 201
    created = await resp.json()
    assert created["name"] == "article" and created["single"] is False
    assert created["fields"] == ARTICLE["fields"]
    again = await cms.post("/api/types", json=ARTICLE, headers=team["admin"].headers)
    assert again.status == 409
    listed = await (await cms.get("/api/types", headers=team["viewer"].headers)).json()
    assert [t["name"] for t in listed["data"]] == ["article"]
    one = await cms.get("/api/types/article", headers=team["viewer"].headers)
    assert (await one.json())["previewUrl"] == ARTICLE["previewUrl"]
    patched = await cms.patch(
        "/api/types/article", json={"label": "Story", "single": True}, headers=team["owner"].headers
    )
    assert (await patched.json())["label"] == "Story"
    rename = await cms.patch(
        "/api/types/article", json={"name": "story"}, headers=team["admin"].headers
    )
    assert rename.status == 400
    assert (await cms.get("/api/types/nope", headers=team["viewer"].headers)).status == 404
    assert (await cms.delete("/api/types/article", headers=team["editor"].headers)).status == 403
    assert (await cms.delete("/api/types/article", headers=team["admin"].headers)).status == 204
    assert (await cms.get("/api/types/article", headers=team["admin"].headers)).status == 404


async def test_agent_key_with_types_manage(cms, team, runtime):
    token = await make_agent_key(
        runtime.db, runtime.clock, team["admin"].id, ["types.manage", "content.read"]
    )
    resp = await cms.post("/api/types", json=ARTICLE, headers=bearer(token))
    assert resp.status == 201
    activity = await (await cms.get("/api/activity", headers=team["admin"].headers)).json()
    actor = activity["data"][0]["actor"]
    assert actor["kind"] == "agent_key" and actor["userId"] == team["admin"].id and actor["keyId"]


DEFINITION_ERRORS = [
    ([{"key": "hero_image", "type": "media"}], "fields.0.key"),
    ([{"key": "HeroImage", "type": "media"}], "fields.0.key"),
    ([{"key": "a", "type": "text"}, {"key": "a", "type": "text"}], "fields.1.key"),
    ([{"key": "a", "type": "blob"}], "fields.0.type"),
    ([{"key": "a", "type": "text", "colour": 1}], "fields.0.colour"),
    ([{"key": "a", "type": "text", "maxLength": -1}], "fields.0.maxLength"),
    ([{"key": "a", "type": "text", "minLength": 5, "maxLength": 2}], "fields.0.minLength"),
    ([{"key": "a", "type": "number", "min": "0"}], "fields.0.min"),
    ([{"key": "a", "type": "text", "required": "yes"}], "fields.0.required"),
    ([{"key": "a", "type": "select"}], "fields.0.options"),
    ([{"key": "a", "type": "select", "options": ["x", "x"]}], "fields.0.options"),
    ([{"key": "a", "type": "multiselect", "options": ["x", 3]}], "fields.0.options.1"),
    ([{"key": "a", "type": "reference", "to": "ghost"}], "fields.0.to"),
    ([{"key": "a", "type": "list"}], "fields.0.fields"),
    (
        [{"key": "a", "type": "list", "fields": [{"key": "b_c", "type": "text"}]}],
        "fields.0.fields.0.key",
    ),
    ("nope", "fields"),
]


async def test_definition_errors_name_the_key(cms, team):
    for fields, key in DEFINITION_ERRORS:
        resp = await cms.post(
            "/api/types", json={"name": "thing", "fields": fields}, headers=team["admin"].headers
        )
        assert resp.status == 400, fields
        body = await resp.json()
        assert body["code"] == "VALIDATION_FAILED"
        assert key in [f["key"] for f in body["details"]["fields"]], fields


PROPERTY_ERRORS = [
    ({"name": "Bad Name"}, "name"),
    ({"name": "ok", "single": "yes"}, "single"),
    ({"name": "ok", "previewUrl": "https://x.example/{nope}"}, "previewUrl"),
    ({"name": "ok", "previewUrl": "ftp://x.example/{slug}"}, "previewUrl"),
    ({"name": "ok", "colour": "red"}, "colour"),
]


async def test_type_property_errors(cms, team):
    for body, key in PROPERTY_ERRORS:
        resp = await cms.post("/api/types", json=body, headers=team["admin"].headers)
        assert resp.status == 400, body
        assert key in [f["key"] for f in (await resp.json())["details"]["fields"]], body


async def test_self_reference_and_referenced_type_cannot_be_deleted(cms, team):
    admin = team["admin"].headers
    page = {"name": "page", "fields": [{"key": "parent", "type": "reference", "to": "page"}]}
    assert (await cms.post("/api/types", json=page, headers=admin)).status == 201
    post = {
        "name": "post",
        "fields": [
            {
                "key": "related",
                "type": "list",
                "fields": [{"key": "page", "type": "reference", "to": "page", "multiple": True}],
            }
        ],
    }
    assert (await cms.post("/api/types", json=post, headers=admin)).status == 201
    resp = await cms.delete("/api/types/page", headers=admin)
    assert resp.status == 409 and (await resp.json())["code"] == "TYPE_IN_USE"
