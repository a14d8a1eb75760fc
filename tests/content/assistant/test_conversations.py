"""Conversations: kept per person, continued across turns, tools fed back, no secret sent."""

from __future__ import annotations

from typing import Any

from tests.content.assistant.conftest import SECRET_KEY, connect, converse
from tests.content.assistant.standins import Reply
from tests.content.factories import make_agent_key, make_delivery_key


async def test_a_conversation_is_kept_and_continued(cms: Any, team: Any, model: Any) -> None:
    script, base = model
    editor = team["editor"].headers
    await connect(cms, team["admin"].headers, "anthropic", base)
    script.replies += [Reply(text=["First answer."]), Reply(text=["Second answer."])]
    conversation, _ = await converse(cms, editor, "First question")
    resp = await cms.post(
        f"/api/assistant/conversations/{conversation}/messages",
        json={"text": "Second question"},
        headers=editor,
    )
    await resp.text()
    # The second request carried the whole conversation.
    sent = str(script.requests[-1]["body"]["messages"])
    assert "First question" in sent and "First answer." in sent and "Second question" in sent
    kept = await (
        await cms.get(f"/api/assistant/conversations/{conversation}", headers=editor)
    ).json()
    assert [m["role"] for m in kept["messages"]] == ["user", "assistant", "user", "assistant"]
    assert kept["title"] == "First question"
    listed = await (await cms.get("/api/assistant/conversations", headers=editor)).json()
    assert [c["id"] for c in listed["data"]] == [conversation]


async def test_another_persons_conversation_is_not_found(cms: Any, team: Any, model: Any) -> None:
    _, base = model
    await connect(cms, team["admin"].headers, "ollama", base)
    conversation, _ = await converse(cms, team["editor"].headers, "Mine")
    other = team["author"].headers
    assert (
        await cms.get(f"/api/assistant/conversations/{conversation}", headers=other)
    ).status == 404
    resp = await cms.post(
        f"/api/assistant/conversations/{conversation}/messages", json={"text": "x"}, headers=other
    )
    assert resp.status == 404
    assert (
        await cms.delete(f"/api/assistant/conversations/{conversation}", headers=other)
    ).status == 404
    listed = await (await cms.get("/api/assistant/conversations", headers=other)).json()
    assert listed["data"] == []


async def test_open_screen_streams_a_screen_event(cms: Any, team: Any, model: Any) -> None:
    script, base = model
    await connect(cms, team["admin"].headers, "openai", base)
    script.replies += [Reply(tools=[("open_screen", {})]), Reply(text=["There."])]
    _, events = await converse(cms, team["author"].headers, "Take me there")
    assert ("screen", {"path": "/admin/settings"}) in events


async def test_a_tool_not_offered_is_refused_to_the_model(
    cms: Any, team: Any, model: Any, toolbox: Any
) -> None:
    script, base = model
    await connect(cms, team["admin"].headers, "openai", base)
    script.replies += [Reply(tools=[("delete_everything", {})]), Reply(text=["Sorry."])]
    _, events = await converse(cms, team["editor"].headers, "Delete it all")
    assert toolbox.calls == []
    assert any(n == "tool_error" for n, _ in events)
    assert "no tool named" in str(script.requests[-1]["body"])


async def test_no_agent_key_can_connect_start_or_spend(
    cms: Any, team: Any, model: Any, runtime: Any
) -> None:
    """Authentication 5: whatever is ticked, on an owner's account."""
    _, base = model
    owner = team["owner"]
    every = ["content.read", "content.write", "settings.manage", "ai.spend"]
    key = {
        "Authorization": f"Bearer {await make_agent_key(runtime.db, runtime.clock, owner.id, every)}"
    }
    resp = await connect(cms, key, "ollama", base)
    assert resp.status == 403 and (await resp.json())["code"] == "KEY_FORBIDDEN"
    await connect(cms, owner.headers, "ollama", base)
    for method, path, body in [
        ("POST", "/api/assistant/conversations", {}),
        ("POST", "/api/assistant/provider/test", None),
        ("DELETE", "/api/assistant/provider", None),
        ("POST", "/api/assistant/field", {"action": "rewrite", "value": "x"}),
    ]:
        resp = await cms.request(method, path, json=body, headers=key)
        assert resp.status == 403, path
        assert (await resp.json())["code"] == "KEY_FORBIDDEN", path
    conversation, _ = await converse(cms, owner.headers, "Hello")
    resp = await cms.post(
        f"/api/assistant/conversations/{conversation}/messages", json={"text": "x"}, headers=key
    )
    assert resp.status == 403


async def test_no_secret_reaches_the_model(
    cms: Any, team: Any, model: Any, toolbox: Any, runtime: Any, db: Any
) -> None:
    """Provider key, delivery key, agent key, webhook and social secrets: none is ever sent."""
    script, base = model
    admin = team["admin"]
    await connect(cms, admin.headers, "openai", base)
    delivery = await make_delivery_key(runtime.db, runtime.clock, ["*"])
    agent = await make_agent_key(runtime.db, runtime.clock, admin.id, ["content.read"])
    webhook = await cms.post(
        "/api/webhooks",
        json={"name": "hook", "url": "https://hooks.example.com/x", "events": ["entry.published"]},
        headers=admin.headers,
    )
    webhook_secret = (await webhook.json()).get("secret", "")
    social_secret = "social-client-secret-abcdef123456"
    await cms.put(
        "/api/social/settings/mastodon",
        json={"clientId": "cid", "clientSecret": social_secret},
        headers=admin.headers,
    )
    # A tool that returns a key (a careless read) has it withheld before the model hears it.
    toolbox.result = {"note": f"key {delivery} and {agent}"}
    script.replies += [Reply(tools=[("get_site_settings", {})]), Reply(text=["ok"])]
    await converse(cms, admin.headers, f"My keys are {delivery} and {agent}, what are my settings?")
    await cms.post("/api/assistant/provider/test", headers=admin.headers)
    field = await cms.post(
        "/api/assistant/field",
        json={"action": "rewrite", "value": f"Hello world {delivery}"},
        headers=admin.headers,
    )
    assert field.status == 200, await field.text()
    await field.text()
    sent = str(script.requests)
    secrets = [SECRET_KEY, delivery, agent, social_secret]
    if webhook_secret:
        secrets.append(webhook_secret)
    for secret in secrets:
        assert secret not in sent.replace(f"Bearer {SECRET_KEY}", ""), secret
    # The provider key travels only as the provider's own credential header.
    assert all(SECRET_KEY not in str(r["body"]) for r in script.requests)
    assert len(script.requests) >= 4
    assert "never ask for, repeat or reveal a secret" in sent.lower()


async def test_a_long_conversation_sends_only_its_newest_turns(
    cms: Any, team: Any, model: Any, monkeypatch: Any
) -> None:
    from content.assistant.conversations import service

    monkeypatch.setattr(service, "MAX_HISTORY_CHARS", 400)
    script, base = model
    editor = team["editor"].headers
    await connect(cms, team["admin"].headers, "anthropic", base)
    conversation, _ = await converse(cms, editor, "oldest question " + "x" * 300)
    for text in ("middle question", "newest question"):
        resp = await cms.post(
            f"/api/assistant/conversations/{conversation}/messages",
            json={"text": text},
            headers=editor,
        )
        await resp.text()
    sent = script.requests[-1]["body"]["messages"]
    assert "oldest question" not in str(sent)
    assert "newest question" in str(sent)
    assert sent[0]["role"] == "user"


async def test_a_tool_that_crashes_does_not_cut_the_stream(
    cms: Any, team: Any, model: Any, toolbox: Any
) -> None:
    script, base = model
    await connect(cms, team["admin"].headers, "ollama", base)
    toolbox.broken = True
    script.replies += [Reply(tools=[("get_site_settings", {})]), Reply(text=["Sorry about that."])]
    _, events = await converse(cms, team["editor"].headers, "Settings?")
    assert ("tool_error", {"id": "call_1", "name": "get_site_settings",
            "error": "the tool get_site_settings failed; try another way"}) in events  # fmt: skip
    assert events[-1][0] == "done"
    assert "Sorry about that." in "".join(d.get("delta", "") for n, d in events if n == "text")
