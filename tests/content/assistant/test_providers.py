"""Each provider kind through its official SDK against a local server speaking its wire format."""

from __future__ import annotations

from typing import Any

import pytest

from content.assistant.providers import ollama_chat
from tests.content.assistant.conftest import SECRET_KEY, connect, converse
from tests.content.assistant.standins import Reply

KINDS = ["openai", "anthropic", "ollama", "ollama-cloud"]


@pytest.fixture(autouse=True)
def cloud_url(model: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # The hosted variant's fixed endpoint, pointed at the stand-in.
    monkeypatch.setattr(ollama_chat, "CLOUD_URL", model[1])


@pytest.mark.parametrize("kind", KINDS)
async def test_text_streams_to_the_person_in_pieces(
    cms: Any, team: Any, model: Any, kind: str
) -> None:
    script, base = model
    admin = team["admin"].headers
    assert (await connect(cms, admin, kind, base)).status == 200
    script.replies.append(Reply(text=["The ", "answer ", "is 42."]))
    _, events = await converse(cms, admin, "What is the answer?")
    deltas = [d["delta"] for name, d in events if name == "text"]
    assert deltas == ["The ", "answer ", "is 42."]
    assert events[-1][0] == "done"
    assert events[-1][1]["usage"] == {"tokensIn": 11, "tokensOut": 7}


@pytest.mark.parametrize("kind", KINDS)
async def test_tool_calls_split_across_chunks_are_joined_and_answered(
    cms: Any, team: Any, model: Any, toolbox: Any, kind: str
) -> None:
    script, base = model
    admin = team["admin"].headers
    await connect(cms, admin, kind, base)
    args = {"title": "A much better title for the whole site"}
    script.replies += [Reply(tools=[("propose_settings_update", args)]), Reply(text=["Proposed."])]
    _, events = await converse(cms, admin, "Improve my title")
    assert toolbox.calls == [("propose_settings_update", args)]
    names = [name for name, _ in events]
    assert names.index("tool") < names.index("proposal") < names.index("done")
    proposal = next(d for n, d in events if n == "proposal")
    assert proposal["changes"][0]["after"] == args["title"]
    # The tool's result went back to the model in the second request.
    second = script.requests[-1]["body"]
    assert "proposal p_1 created" in str(second)


@pytest.mark.parametrize("kind", KINDS)
async def test_refused_arguments_are_told_to_the_model_which_retries(
    cms: Any, team: Any, model: Any, toolbox: Any, kind: str
) -> None:
    script, base = model
    admin = team["admin"].headers
    await connect(cms, admin, kind, base)
    script.replies += [
        Reply(tools=[("propose_settings_update", {})]),
        Reply(tools=[("propose_settings_update", {"title": "Fixed"})]),
        Reply(text=["Done."]),
    ]
    _, events = await converse(cms, admin, "Change the title")
    assert [n for n, _ in events].count("proposal") == 1
    assert "title is required" in str(script.requests[1]["body"])


@pytest.mark.parametrize("kind", KINDS)
async def test_provider_error_and_rate_limit_are_shown_in_the_error_shape(
    cms: Any, team: Any, model: Any, kind: str
) -> None:
    script, base = model
    admin = team["admin"].headers
    await connect(cms, admin, kind, base)
    script.replies.append(Reply(status=429, error="slow down please", retry_after="7"))
    _, events = await converse(cms, admin, "Hi")
    error = next(d for n, d in events if n == "error")
    assert error["code"] == "AI_PROVIDER_RATE_LIMITED"
    assert error["details"]["providerStatus"] == 429
    assert "slow down please" in error["details"]["reason"]
    if kind != "ollama" and kind != "ollama-cloud":  # ollama's SDK drops headers
        assert error["details"]["retryAfter"] == 7
    script.replies.append(Reply(status=500, error="the model crashed"))
    _, events = await converse(cms, admin, "Hi")
    error = next(d for n, d in events if n == "error")
    assert error["code"] == "AI_PROVIDER_ERROR"
    assert set(error) == {"error", "code", "details"}


@pytest.mark.parametrize("kind", KINDS)
async def test_connection_test_passes_with_the_marker_tool(
    cms: Any, team: Any, model: Any, kind: str
) -> None:
    script, base = model
    admin = team["admin"].headers
    await connect(cms, admin, kind, base)
    resp = await cms.post("/api/assistant/provider/test", headers=admin)
    assert resp.status == 200
    assert await resp.json() == {
        "ok": True,
        "problem": None,
        "message": "streamed tool calling works",
    }
    # Only the marker tool was offered: the test reads and changes nothing.
    tools = script.requests[-1]["body"]["tools"]
    assert len(tools) == 1 and "connection_check" in str(tools)
    shown = await (await cms.get("/api/assistant/provider", headers=admin)).json()
    assert shown["provider"]["test"]["ok"] is True


@pytest.mark.parametrize("kind", KINDS)
async def test_connection_test_names_each_failure(
    cms: Any, team: Any, model: Any, kind: str
) -> None:
    script, base = model
    admin = team["admin"].headers
    await connect(cms, admin, kind, base)

    async def problem() -> str | None:
        resp = await cms.post("/api/assistant/provider/test", headers=admin)
        assert resp.status == 200
        return (await resp.json())["problem"]

    script.echo_marker = False
    assert await problem() == "no_tool_calling"
    script.echo_marker = True
    if kind in ("openai", "anthropic"):  # NDJSON has no way not to stream
        script.replies.append(Reply(text=["whole"], no_stream=True))
        assert await problem() == "no_streaming"
    script.models = {"another-model"}
    assert await problem() == "model_not_found"
    script.models = set()
    if kind != "ollama":
        script.keys = {"a-different-key"}
        assert await problem() == "auth"
        script.keys = set()
    if kind == "ollama-cloud":
        return
    url = "http://127.0.0.1:9/v1" if kind == "openai" else "http://127.0.0.1:9"
    await connect(cms, admin, kind, base, baseUrl=url)
    assert await problem() == "unreachable"


async def test_the_key_is_sealed_and_only_a_hint_is_shown(
    cms: Any, team: Any, model: Any, db: Any
) -> None:
    _, base = model
    admin = team["admin"].headers
    resp = await connect(cms, admin, "openai", base)
    shown = await resp.json()
    assert SECRET_KEY not in str(shown)
    assert shown["provider"]["keyHint"] == "…" + SECRET_KEY[-4:]
    row = await db.fetch_one("SELECT * FROM content.assistant_provider")
    assert SECRET_KEY not in str(row)


async def test_connect_refuses_bad_settings(cms: Any, team: Any) -> None:
    admin = team["admin"].headers
    resp = await cms.put(
        "/api/assistant/provider",
        json={"kind": "anthropic", "model": "", "baseUrl": "ftp://x"},
        headers=admin,
    )
    assert resp.status == 400
    keys = {f["key"] for f in (await resp.json())["details"]["fields"]}
    assert keys == {"model", "baseUrl", "apiKey"}
    resp = await cms.put(
        "/api/assistant/provider",
        json={
            "kind": "ollama-cloud",
            "model": "m",
            "apiKey": "k" * 20,
            "baseUrl": "https://x.example",
        },
        headers=admin,
    )
    assert [f["key"] for f in (await resp.json())["details"]["fields"]] == ["baseUrl"]


async def test_ssrf_rule_for_base_urls(make_cms: Any, runtime: Any, team: Any) -> None:
    """Default deployment: hosted kinds public https only; the local runtime near, never link-local."""
    cms = await make_cms(runtime)
    admin = team["admin"].headers

    async def status(kind: str, url: str) -> int:
        body = {"kind": kind, "model": "m", "baseUrl": url}
        if kind != "ollama":
            body["apiKey"] = "k" * 20
        return (await cms.put("/api/assistant/provider", json=body, headers=admin)).status

    assert await status("ollama", "http://127.0.0.1:11434") == 200
    assert await status("ollama", "http://192.168.1.20:11434") == 200
    assert await status("ollama", "http://169.254.169.254") == 400
    assert await status("ollama", "http://[fe80::1]:11434") == 400
    assert await status("openai", "https://127.0.0.1/v1") == 400
    assert await status("openai", "https://10.0.0.5/v1") == 400
    assert await status("openai", "http://api.example.com/v1") == 400
    assert await status("anthropic", "https://localhost") == 400
    assert await status("openai", "https://api.example.com/v1") == 200


async def test_only_one_provider_is_connected(cms: Any, team: Any, model: Any) -> None:
    _, base = model
    admin = team["admin"].headers
    await connect(cms, admin, "openai", base)
    await connect(cms, admin, "ollama", base)
    shown = await (await cms.get("/api/assistant/provider", headers=admin)).json()
    assert shown["provider"]["kind"] == "ollama" and shown["provider"]["keyHint"] is None
    assert (await cms.delete("/api/assistant/provider", headers=admin)).status == 204
    shown = await (await cms.get("/api/assistant/provider", headers=admin)).json()
    assert shown["connected"] is False
    resp = await cms.post("/api/assistant/provider/test", headers=admin)
    assert resp.status == 409 and (await resp.json())["code"] == "AI_NOT_CONNECTED"


async def test_a_name_that_resolves_inside_is_refused_at_call_time(
    make_cms: Any, runtime: Any, team: Any, model: Any, db: Any
) -> None:
    """Saved while public, re-pointed inside later: judged again, after DNS, before each call."""
    script, base = model
    cms = await make_cms(runtime)  # WEBHOOK_ALLOW_PRIVATE unset
    admin = team["admin"].headers
    resp = await cms.put(
        "/api/assistant/provider",
        json={
            "kind": "openai",
            "model": "m",
            "baseUrl": "https://api.example.com/v1",
            "apiKey": "k" * 20,
        },
        headers=admin,
    )
    assert resp.status == 200
    port = base.rsplit(":", 1)[1]
    await db.execute(
        "UPDATE content.assistant_provider SET base_url = %s", (f"https://localhost:{port}/v1",)
    )
    found = await (await cms.post("/api/assistant/provider/test", headers=admin)).json()
    assert found["ok"] is False and found["problem"] == "unreachable"
    assert "may not reach" in found["message"]
    assert script.requests == []  # nothing was sent to the inside address
