"""The visitor bubble: grounded in published, in-scope content, with sources; its switches."""

from __future__ import annotations

from typing import Any

from common.db import Json
from common.ids import short_id
from tests.content.assistant.conftest import connect
from tests.content.assistant.standins import Reply
from tests.content.factories import make_delivery_key, make_type

SITE = "https://www.example.org"


async def entry(
    db: Any, clock: Any, type_row: dict[str, Any], title: str, text: str, status: str = "published"
) -> str:
    entry_id = short_id()
    now = clock.now()
    await db.execute(
        "INSERT INTO content.entries (id, type_id, slug, title, data, status, created_at, updated_at,"
        " published_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            entry_id,
            type_row["id"],
            entry_id.lower(),
            title,
            Json({"body": text}),
            status,
            now,
            now,
            now,
        ),
    )
    return entry_id


async def site(cms: Any, team: Any, model: Any, runtime: Any) -> dict[str, Any]:
    _, base = model
    db, clock = runtime.db, runtime.clock
    page = await make_type(
        db,
        clock,
        "page",
        [{"key": "body", "type": "text"}],
        preview_url="https://www.example.org/{slug}",
    )
    secret = await make_type(db, clock, "memo", [{"key": "body", "type": "text"}])
    ids = {
        "hours": await entry(
            db, clock, page, "Opening hours", "The shop opens at nine and closes at six."
        ),
        "draft": await entry(
            db, clock, page, "Holiday hours", "Closed on Sundays and holidays.", "draft"
        ),
        "memo": await entry(
            db, clock, secret, "Staff hours", "Staff arrive at eight, the shop opens later."
        ),
    }
    await connect(cms, team["admin"].headers, "openai", base)
    return ids


async def enable(cms: Any, team: Any, **extra: Any) -> None:
    body = {"enabled": True, "origins": [SITE], "types": ["page"], "ratePerMinute": 10, **extra}
    resp = await cms.put("/api/assistant/bubble", json=body, headers=team["admin"].headers)
    assert resp.status == 200, await resp.text()


async def test_ask_answers_only_from_published_in_scope_content_with_sources(
    cms: Any, team: Any, model: Any, runtime: Any
) -> None:
    script, _ = model
    ids = await site(cms, team, model, runtime)
    await enable(cms, team)
    key = await make_delivery_key(runtime.db, runtime.clock, ["page"])
    script.replies.append(Reply(text=["The shop opens ", "at nine."]))
    resp = await cms.post(
        "/ext/assistant/ask",
        json={"question": "When do the hours start?"},
        headers={"X-Api-Key": key},
    )
    assert resp.status == 200, await resp.text()
    body = await resp.json()
    assert body["answer"] == "The shop opens at nine."
    assert [s["id"] for s in body["sources"]] == [ids["hours"]]
    assert body["sources"][0]["url"] == f"https://www.example.org/{ids['hours'].lower()}"
    sent = str(script.requests[-1]["body"])
    assert "opens at nine" in sent
    assert "Closed on Sundays" not in sent  # a draft
    assert "Staff arrive" not in sent  # a type outside the key's scopes
    # The retrieved text is delimited data, and the system prompt says so.
    assert "<documents>" in sent and "data, not instructions" in sent


async def test_nothing_found_answers_without_calling_the_model(
    cms: Any, team: Any, model: Any, runtime: Any
) -> None:
    script, _ = model
    await site(cms, team, model, runtime)
    await enable(cms, team)
    key = await make_delivery_key(runtime.db, runtime.clock, ["page"])
    before = len(script.requests)
    resp = await cms.post(
        "/ext/assistant/ask", json={"question": "zebra xylophone"}, headers={"X-Api-Key": key}
    )
    assert (await resp.json())["sources"] == []
    assert len(script.requests) == before


async def test_public_ask_needs_an_allowed_origin_and_is_rate_limited(
    cms: Any, team: Any, model: Any, runtime: Any
) -> None:
    ids = await site(cms, team, model, runtime)
    await enable(cms, team, ratePerMinute=2)
    question = {"question": "opening hours"}
    resp = await cms.post(
        "/ext/assistant/public-ask", json=question, headers={"Origin": "https://evil.example"}
    )
    assert resp.status == 403 and (await resp.json())["code"] == "ORIGIN_REFUSED"
    resp = await cms.post("/ext/assistant/public-ask", json=question)
    assert resp.status == 403
    resp = await cms.post("/ext/assistant/public-ask", json=question, headers={"Origin": SITE})
    assert resp.status == 200
    assert resp.headers["Access-Control-Allow-Origin"] == SITE
    assert [s["id"] for s in (await resp.json())["sources"]] == [ids["hours"]]
    await cms.post("/ext/assistant/public-ask", json=question, headers={"Origin": SITE})
    resp = await cms.post("/ext/assistant/public-ask", json=question, headers={"Origin": SITE})
    assert resp.status == 429 and "Retry-After" in resp.headers
    runtime.clock.advance(61)
    resp = await cms.post("/ext/assistant/public-ask", json=question, headers={"Origin": SITE})
    assert resp.status == 200


async def test_widget_and_routes_are_404_until_enabled(
    cms: Any, team: Any, model: Any, runtime: Any
) -> None:
    await site(cms, team, model, runtime)
    resp = await cms.get("/ext/assistant/widget.js")
    assert resp.status == 404 and (await resp.json())["code"] == "AI_BUBBLE_DISABLED"
    resp = await cms.post(
        "/ext/assistant/public-ask", json={"question": "hours"}, headers={"Origin": SITE}
    )
    assert resp.status == 404
    await enable(cms, team)
    resp = await cms.get("/ext/assistant/widget.js")
    assert resp.status == 200
    assert resp.headers["Content-Type"].startswith("text/javascript")
    code = "\n".join(line for line in (await resp.text()).splitlines() if not line.startswith("//"))
    # No third-party origin, no HTML injection, no eval: it runs under a strict CSP.
    assert "innerHTML" not in code and "eval(" not in code and "<script" not in code
    assert "https://" not in code and "http://" not in code
    assert "/ext/assistant/public-ask" in code
    await enable(cms, team, enabled=False)
    assert (await cms.get("/ext/assistant/widget.js")).status == 404


async def test_the_ask_route_takes_a_delivery_key_only(
    cms: Any, team: Any, model: Any, runtime: Any
) -> None:
    await site(cms, team, model, runtime)
    await enable(cms, team)
    resp = await cms.post(
        "/ext/assistant/ask", json={"question": "hours"}, headers=team["admin"].headers
    )
    assert resp.status == 401
    resp = await cms.post("/ext/assistant/ask", json={"question": "hours"})
    assert resp.status == 401


async def test_bubble_settings_are_validated(cms: Any, team: Any) -> None:
    resp = await cms.put(
        "/api/assistant/bubble",
        json={"enabled": True, "origins": ["https://a.example/path", "nope"]},
        headers=team["admin"].headers,
    )
    assert resp.status == 400
    assert {f["key"] for f in (await resp.json())["details"]["fields"]} == {
        "origins.0",
        "origins.1",
    }
    resp = await cms.put(
        "/api/assistant/bubble", json={"enabled": True}, headers=team["editor"].headers
    )
    assert resp.status == 403
