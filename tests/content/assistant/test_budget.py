"""The budget: metered from the provider's usage fields, refused past an admin's limits."""

from __future__ import annotations

from typing import Any

from tests.content.assistant.conftest import connect, converse
from tests.content.assistant.standins import Reply
from tests.content.factories import make_session


async def test_usage_is_metered_per_person_and_site(cms: Any, team: Any, model: Any) -> None:
    script, base = model
    admin = team["admin"].headers
    await connect(cms, admin, "anthropic", base)
    script.replies += [Reply(text=["a"], tokens=(100, 20)), Reply(text=["b"], tokens=(50, 5))]
    await converse(cms, team["editor"].headers, "one")
    await converse(cms, team["author"].headers, "two")
    overview = await (await cms.get("/api/assistant/budget", headers=admin)).json()
    assert overview["site"] == {"tokensIn": 150, "tokensOut": 25, "requests": 2}
    by_person = {p["userId"]: p for p in overview["people"]}
    assert by_person[team["editor"].id]["tokensIn"] == 100
    assert by_person[team["author"].id]["tokensOut"] == 5
    mine = await (await cms.get("/api/assistant", headers=team["editor"].headers)).json()
    assert mine["usage"]["tokensIn"] == 100 and mine["connected"] is True


async def test_past_the_person_limit_a_clear_refusal(
    cms: Any, team: Any, model: Any, clock: Any, db: Any
) -> None:
    script, base = model
    admin = team["admin"].headers
    editor = team["editor"].headers
    await connect(cms, admin, "openai", base)
    resp = await cms.put(
        "/api/assistant/budget", json={"personMonthly": 100, "siteMonthly": None}, headers=admin
    )
    assert resp.status == 200
    script.replies.append(Reply(text=["big"], tokens=(90, 20)))
    conversation, _ = await converse(cms, editor, "spend")
    resp = await cms.post(
        f"/api/assistant/conversations/{conversation}/messages",
        json={"text": "more"},
        headers=editor,
    )
    assert resp.status == 429
    body = await resp.json()
    assert body["code"] == "AI_BUDGET_EXCEEDED"
    assert body["details"]["scope"] == "person" and body["details"]["used"] == 110
    assert int(resp.headers["Retry-After"]) > 0
    # Another person still has their own budget.
    _, events = await converse(cms, team["author"].headers, "mine")
    assert events[-1][0] == "done"
    # A new month starts afresh.
    clock.advance(days=31)
    fresh = {"Authorization": f"Bearer {await make_session(db, clock, team['editor'].id)}"}
    _, events = await converse(cms, fresh, "next month")
    assert events[-1][0] == "done"


async def test_past_the_site_limit_everyone_and_the_bubble_are_refused(
    cms: Any, team: Any, model: Any
) -> None:
    script, base = model
    admin = team["admin"].headers
    await connect(cms, admin, "ollama", base)
    await cms.put("/api/assistant/budget", json={"siteMonthly": 10}, headers=admin)
    script.replies.append(Reply(text=["x"], tokens=(10, 1)))
    await converse(cms, team["editor"].headers, "spend")
    resp = await cms.post(
        "/api/assistant/field", json={"action": "suggest"}, headers=team["author"].headers
    )
    assert resp.status == 429
    assert (await resp.json())["details"]["scope"] == "site"


async def test_limits_are_validated_and_admin_only(cms: Any, team: Any) -> None:
    resp = await cms.put(
        "/api/assistant/budget", json={"personMonthly": -1}, headers=team["admin"].headers
    )
    assert resp.status == 400
    assert (await resp.json())["details"]["fields"][0]["key"] == "personMonthly"
    resp = await cms.put(
        "/api/assistant/budget", json={"personMonthly": 5}, headers=team["editor"].headers
    )
    assert resp.status == 403
