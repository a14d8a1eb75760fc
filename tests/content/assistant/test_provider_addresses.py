"""The SSRF rule at connect: each SDK connects only to an address judged after its own resolution.

A name that answers a public address when the call is checked and an inside
one when the SDK connects (DNS rebinding) is stood in for by replacing the
one resolver the check and the connect share (addresses.resolve).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from aiohttp import web

from content.assistant.providers import addresses
from tests.content.assistant.conftest import connect, converse
from tests.content.assistant.standins import Reply

PUBLIC = "93.184.215.14"


def rebinding(monkeypatch: pytest.MonkeyPatch, *answers: list[str]) -> list[str]:
    """Each resolution of any name answers the next of ``answers`` (the last one repeats)."""
    asked: list[str] = []

    async def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        return answers[min(len(asked), len(answers)) - 1]

    monkeypatch.setattr(addresses, "resolve", resolve)
    return asked


@pytest.mark.parametrize(
    ("kind", "url", "inside"),
    [
        ("openai", "https://provider.test/v1", ["127.0.0.1"]),
        ("anthropic", "https://provider.test", ["10.0.0.5"]),
        ("ollama", "http://provider.test:11434", ["169.254.169.254"]),
        ("ollama", "http://provider.test:11434", ["127.0.0.1", "169.254.169.254"]),
    ],
)
async def test_a_name_rebound_inside_between_check_and_connect_is_refused(
    make_cms: Any,
    runtime: Any,
    team: Any,
    model: Any,
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    url: str,
    inside: list[str],
) -> None:
    script, _ = model
    cms = await make_cms(runtime)  # WEBHOOK_ALLOW_PRIVATE unset
    admin = team["admin"].headers
    assert (await connect(cms, admin, kind, "", baseUrl=url)).status == 200
    asked = rebinding(monkeypatch, [PUBLIC], inside)
    found = await (await cms.post("/api/assistant/provider/test", headers=admin)).json()
    assert found["ok"] is False and found["problem"] == "unreachable"
    assert "provider.test resolves to an address this provider may not reach" in found["message"]
    assert asked == ["provider.test", "provider.test"]  # judged before the call and at connect

    asked.clear()
    _, events = await converse(cms, admin, "Hi")
    error = next(d for n, d in events if n == "error")
    assert error["code"] == "AI_PROVIDER_REFUSED"
    assert "may not reach" in error["details"]["reason"]
    assert len(asked) == 2
    assert script.requests == []


@pytest.mark.parametrize("kind", ["openai", "anthropic", "ollama"])
async def test_the_sdk_connects_to_the_judged_address_and_keeps_the_name(
    cms: Any, team: Any, model: Any, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """A name only the guarded resolver knows is reached: the SDK connects where it was judged."""
    script, base = model
    port = base.rsplit(":", 1)[1]
    admin = team["admin"].headers
    url = f"http://provider.test:{port}" + ("/v1" if kind == "openai" else "")
    assert (await connect(cms, admin, kind, "", baseUrl=url)).status == 200
    asked = rebinding(monkeypatch, ["127.0.0.1"])
    script.replies.append(Reply(text=["Hello ", "there."]))
    _, events = await converse(cms, admin, "Hi")
    assert "".join(d["delta"] for n, d in events if n == "text") == "Hello there."
    assert "provider.test" in asked
    assert script.requests[-1]["headers"]["Host"] == f"provider.test:{port}"


@pytest.mark.parametrize("kind", ["openai", "anthropic", "ollama"])
async def test_a_redirect_is_not_followed(
    cms: Any, team: Any, model: Any, aiohttp_server: Callable[..., Any], kind: str
) -> None:
    """A provider answering 3xx cannot bounce the call, and its key, to another address."""
    script, base = model

    async def bounce(request: web.Request) -> web.Response:
        raise web.HTTPTemporaryRedirect(base + request.path)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", bounce)
    elsewhere = str((await aiohttp_server(app)).make_url("")).rstrip("/")
    admin = team["admin"].headers
    assert (await connect(cms, admin, kind, elsewhere)).status == 200
    found = await (await cms.post("/api/assistant/provider/test", headers=admin)).json()
    assert found["ok"] is False and found["problem"] == "provider_error"
    assert script.requests == []
