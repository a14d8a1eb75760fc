"""Every field type through POST /api/entries: valid, each invalid kind, empty, nested."""

from __future__ import annotations

import pytest

from tests.content.factories import make_media, make_type

FIELDS = [
    {"key": "line", "type": "text", "maxLength": 10},
    {"key": "body", "type": "textarea", "minLength": 3},
    {"key": "rich", "type": "richtext"},
    {"key": "notes", "type": "markdown"},
    {"key": "score", "type": "number", "min": 0, "max": 10},
    {"key": "count", "type": "number", "integer": True},
    {"key": "flag", "type": "boolean"},
    {"key": "day", "type": "date"},
    {"key": "moment", "type": "datetime"},
    {"key": "size", "type": "select", "options": ["s", {"value": "m", "label": "Medium"}]},
    {"key": "sizes", "type": "multiselect", "options": ["s", "m", "l"], "maxItems": 2},
    {"key": "hero", "type": "media"},
    {"key": "photos", "type": "gallery", "maxItems": 2},
    {"key": "author", "type": "reference", "to": "person"},
    {"key": "friends", "type": "reference", "to": "person", "multiple": True},
    {"key": "extra", "type": "json"},
    {"key": "tint", "type": "color"},
    {"key": "site", "type": "url"},
    {"key": "mail", "type": "email"},
    {
        "key": "items",
        "type": "list",
        "maxItems": 3,
        "fields": [
            {"key": "title", "type": "text", "required": True},
            {
                "key": "links",
                "type": "list",
                "fields": [{"key": "href", "type": "url", "required": True}],
            },
        ],
    },
]

EMPTY = {
    "line": "", "body": "", "rich": "", "notes": "", "score": None, "count": None, "flag": False,
    "day": None, "moment": None, "size": None, "sizes": [], "hero": None, "photos": [],
    "author": None, "friends": [], "extra": None, "tint": "", "site": "", "mail": "", "items": [],
}  # fmt: skip


@pytest.fixture
async def setup(cms, team, runtime, clock):
    await make_type(runtime.db, clock, "person", [])
    await make_type(runtime.db, clock, "place", [])
    await make_type(runtime.db, clock, "kitchen", FIELDS)
    # Media and gallery fields take ids of image media the library holds.
    for media_id in ("media_1", "a1", "b2", "ok", "a", "b", "c"):
        await make_media(runtime.db, clock, media_id)
    editor = team["editor"]

    async def entry(type_name, title="x", data=None):
        return await cms.post(
            "/api/entries",
            json={"type": type_name, "title": title, "data": data or {}},
            headers=editor.headers,
        )

    people = [(await (await entry("person", f"p{i}")).json())["id"] for i in range(2)]
    place = (await (await entry("place", "somewhere")).json())["id"]
    return {"entry": entry, "people": people, "place": place}


async def test_empty_values(setup):
    resp = await setup["entry"]("kitchen", data={"line": None, "sizes": []})
    assert resp.status == 201
    assert (await resp.json())["data"] == EMPTY


async def test_valid_values_are_kept_or_normalised(setup):
    p1, p2 = setup["people"]
    data = {
        "line": "Short",
        "body": "multi\nline",
        "rich": '<p onclick="x()">Hi <script>alert(1)</script><a href="javascript:x">a</a><b>b</b></p>',
        "notes": "# Title\n\n<b>kept</b> as *written*",
        "score": 9.5,
        "count": 3.0,
        "flag": True,
        "day": "2030-02-28",
        "moment": "2030-01-01T14:00:00+02:00",
        "size": "m",
        "sizes": ["s", "l"],
        "hero": "media_1",
        "photos": ["a1", "b2"],
        "author": p1,
        "friends": [p1, p2],
        "extra": {"any": ["thing", 1, None]},
        "tint": "#AABBCC",
        "site": "https://example.com/a?b=c",
        "mail": "Someone@Example.COM",
        "items": [{"title": "one", "links": [{"href": "https://a.example"}]}, {"title": "two"}],
    }
    resp = await setup["entry"]("kitchen", data=data)
    assert resp.status == 201, await resp.text()
    stored = (await resp.json())["data"]
    assert stored["rich"] == '<p>Hi <a rel="noopener noreferrer">a</a><b>b</b></p>'
    assert stored["notes"] == data["notes"]
    assert stored["count"] == 3 and isinstance(stored["count"], int)
    assert stored["moment"] == "2030-01-01T12:00:00Z"
    assert stored["tint"] == "#aabbcc"
    assert stored["mail"] == "Someone@example.com"
    assert stored["items"] == [
        {"title": "one", "links": [{"href": "https://a.example"}]},
        {"title": "two", "links": []},
    ]
    for key in (
        "line",
        "body",
        "score",
        "flag",
        "day",
        "size",
        "sizes",
        "hero",
        "photos",
        "author",
        "friends",
        "extra",
        "site",
    ):
        assert stored[key] == data[key], key


INVALID = [
    ("line", 5, "line"),
    ("line", "two\nlines", "line"),
    ("line", "x" * 11, "line"),
    ("body", "ab", "body"),
    ("body", ["x"], "body"),
    ("rich", 1, "rich"),
    ("notes", {"a": 1}, "notes"),
    ("score", "5", "score"),
    ("score", 11, "score"),
    ("score", -1, "score"),
    ("score", True, "score"),
    ("count", 1.5, "count"),
    ("flag", "true", "flag"),
    ("flag", 1, "flag"),
    ("day", "2030-02-30", "day"),
    ("day", "30/01/2030", "day"),
    ("day", 20300101, "day"),
    ("moment", "2030-01-01T12:00:00", "moment"),
    ("moment", "yesterday", "moment"),
    ("size", "xl", "size"),
    ("size", 1, "size"),
    ("sizes", "s", "sizes"),
    ("sizes", ["s", "xl"], "sizes.1"),
    ("sizes", ["s", "s"], "sizes"),
    ("sizes", ["s", "m", "l"], "sizes"),
    ("hero", "../etc/passwd", "hero"),
    ("hero", 12, "hero"),
    ("photos", "a1", "photos"),
    ("photos", ["ok", "not ok"], "photos.1"),
    ("photos", ["a", "b", "c"], "photos"),
    ("author", "missing-entry", "author"),
    ("author", ["x"], "author"),
    ("friends", "x", "friends"),
    ("friends", ["missing"], "friends.0"),
    ("tint", "red", "tint"),
    ("tint", "#12345", "tint"),
    ("site", "example.com", "site"),
    ("site", "javascript:alert(1)", "site"),
    ("site", "http://exa mple.com", "site"),
    ("site", "https://example.com:99999/", "site"),
    ("mail", "not-an-email", "mail"),
    ("mail", "a@b", "mail"),
    ("items", "x", "items"),
    ("items", [{"title": "ok"}, "nope"], "items.1"),
    ("items", [{"title": "ok"}, {"title": ""}], "items.1.title"),
    ("items", [{"title": "ok"}, {"title": "ok", "colour": 1}], "items.1.colour"),
    ("items", [{"title": "a"}, {"title": "b"}, {"title": "c"}, {"title": "d"}], "items"),
    (
        "items",
        [{"title": "a", "links": [{"href": "https://ok.example"}, {"href": "nope"}]}],
        "items.0.links.1.href",
    ),
    ("items", [{"title": "a", "links": [{}]}], "items.0.links.0.href"),
    ("nope", 1, "nope"),
]


async def test_invalid_values_name_the_exact_key(setup):
    # One database for every case: each refused save changes nothing.
    for key, value, error_key in INVALID:
        resp = await setup["entry"]("kitchen", data={key: value})
        assert resp.status == 400, (key, value)
        body = await resp.json()
        assert body["code"] == "VALIDATION_FAILED"
        assert [f["key"] for f in body["details"]["fields"]] == [error_key], (key, value)


async def test_reference_to_the_wrong_type_or_a_trashed_entry(setup, cms, team):
    resp = await setup["entry"]("kitchen", data={"author": setup["place"]})
    field = (await resp.json())["details"]["fields"][0]
    assert field == {"key": "author", "message": "must be a person entry, not a place entry"}
    person_id = setup["people"][0]
    await cms.delete(f"/api/entries/{person_id}", headers=team["editor"].headers)
    resp = await setup["entry"]("kitchen", data={"friends": [setup["people"][1], person_id]})
    assert (await resp.json())["details"]["fields"][0]["key"] == "friends.1"


async def test_required_fields_refuse_their_empty_value(cms, team, runtime, clock):
    fields = [
        {"key": "name", "type": "text", "required": True},
        {"key": "tags", "type": "multiselect", "options": ["a"], "required": True},
        {"key": "agree", "type": "boolean", "required": True},
    ]
    await make_type(runtime.db, clock, "form", fields)
    resp = await cms.post(
        "/api/entries",
        json={"type": "form", "title": "f", "data": {"name": "  ", "tags": [], "agree": False}},
        headers=team["editor"].headers,
    )
    assert [f["key"] for f in (await resp.json())["details"]["fields"]] == ["name", "tags"]
