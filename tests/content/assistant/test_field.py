"""The field assistant: one field's suggestion, streamed, no tools, nothing saved."""

from __future__ import annotations

from typing import Any

from tests.content.assistant.conftest import connect, parse_sse
from tests.content.assistant.standins import Reply


async def test_rewrite_streams_a_suggestion_and_saves_nothing(
    cms: Any, team: Any, model: Any, db: Any
) -> None:
    script, base = model
    await connect(cms, team["admin"].headers, "anthropic", base)
    script.replies.append(Reply(text=["A brighter ", "headline"]))
    before = await db.fetch_val("SELECT count(*) FROM content.activity")
    resp = await cms.post(
        "/api/assistant/field",
        json={
            "action": "translate",
            "value": "Bonjour",
            "field": "Headline",
            "language": "English",
        },
        headers=team["author"].headers,
    )
    assert resp.status == 200
    events = parse_sse(await resp.text())
    assert [d["delta"] for n, d in events if n == "text"] == ["A brighter ", "headline"]
    assert events[-1] == (
        "done",
        {"suggestion": "A brighter headline", "usage": {"tokensIn": 11, "tokensOut": 7}},
    )
    sent = script.requests[-1]["body"]
    assert "tools" not in sent
    assert "English" in str(sent) and "Bonjour" in str(sent)
    assert await db.fetch_val("SELECT count(*) FROM content.activity") == before


async def test_field_assistant_refusals(cms: Any, team: Any, model: Any) -> None:
    _, base = model
    author = team["author"].headers
    resp = await cms.post(
        "/api/assistant/field", json={"action": "rewrite", "value": "x"}, headers=author
    )
    assert resp.status == 409 and (await resp.json())["code"] == "AI_NOT_CONNECTED"
    await connect(cms, team["admin"].headers, "ollama", base)
    resp = await cms.post(
        "/api/assistant/field", json={"action": "translate", "value": "x"}, headers=author
    )
    assert resp.status == 400
    assert [f["key"] for f in (await resp.json())["details"]["fields"]] == ["language"]
    resp = await cms.post(
        "/api/assistant/field",
        json={"action": "rewrite", "value": "x"},
        headers=team["viewer"].headers,
    )
    assert resp.status == 403


async def test_wrong_shapes_are_named_not_crashed_on(cms: Any, team: Any, model: Any) -> None:
    _, base = model
    admin = team["admin"].headers
    await connect(cms, admin, "ollama", base)
    for path, body, key in [
        ("/api/assistant/field", {"action": {}}, "action"),
        ("/api/assistant/field", {"action": "suggest", "colour": "red"}, "colour"),
        ("/api/assistant/budget", {"personMonthly": 5, "perPerson": 1}, "perPerson"),
        ("/api/assistant/bubble", {"enabled": False, "origin": "x"}, "origin"),
        ("/api/assistant/conversations", {"topic": "x"}, "topic"),
        ("/api/assistant/provider", {"kind": "ollama", "model": "m", "url": "x"}, "url"),
    ]:
        method = (
            cms.put
            if path in ("/api/assistant/budget", "/api/assistant/bubble", "/api/assistant/provider")
            else cms.post
        )
        resp = await method(path, json=body, headers=admin)
        assert resp.status == 400, path
        assert [f["key"] for f in (await resp.json())["details"]["fields"]] == [key], path


async def test_null_where_a_string_is_expected_is_refused(cms: Any, team: Any, model: Any) -> None:
    _, base = model
    admin = team["admin"].headers
    await connect(cms, admin, "ollama", base)
    resp = await cms.post(
        "/api/assistant/field", json={"action": "suggest", "value": None}, headers=admin
    )
    assert [f["key"] for f in (await resp.json())["details"]["fields"]] == ["value"]
    resp = await cms.post("/api/assistant/conversations", json={"title": {}}, headers=admin)
    assert [f["key"] for f in (await resp.json())["details"]["fields"]] == ["title"]
    resp = await cms.put("/api/assistant/bubble", json={"types": ["x" * 101]}, headers=admin)
    assert [f["key"] for f in (await resp.json())["details"]["fields"]] == ["types.0"]
