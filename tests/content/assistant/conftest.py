"""Fixtures for the assistant: the CMS with a stand-in model server beside it (the
conversation tests), and a CMS with visual pages, the sample plugins, a design surface
and some content where the toolbox is called directly as a person (the tool tests)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from common.runtime import Runtime
from content.assistant.toolbox import ToolOutcome, ToolSpec
from content.assistant.tools import TOOLBOX
from content.auth.principal import Principal, User
from content.context import CONTEXT, Context
from content.options import ContentOptions
from content.people import service as people
from content.service import ContentService
from tests.content.assistant.standins import Script, make_app
from tests.content.conftest import Start
from tests.content.factories import Person, make_media
from tests.content.test_social import bsky  # noqa: F401 - the Bluesky stand-in fixture
from tests.content.test_webhooks import receiver  # noqa: F401 - a webhook target

# The host's visual page of the page type: three sections.
SECRET_KEY = "sk-test-provider-key-0123456789abcdef"


class FakeToolbox:
    """Two tools: a read (get_site_settings) and a proposal; records every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.result: Any = {"title": "My site"}
        self.broken = False

    def specs(self, ctx: Any, principal: Any, *, visual_connected: bool) -> list[ToolSpec]:
        schema = {"type": "object", "properties": {"title": {"type": "string"}}}
        return [
            ToolSpec(
                "get_site_settings", "The site settings.", {"type": "object", "properties": {}}
            ),
            ToolSpec("propose_settings_update", "Propose new settings.", schema),
            ToolSpec("open_screen", "Move the admin.", {"type": "object", "properties": {}}),
        ]

    async def call(
        self, ctx: Any, principal: Any, conversation_id: str, name: str, arguments: dict[str, Any]
    ) -> ToolOutcome:
        self.calls.append((name, arguments))
        if self.broken:
            raise RuntimeError("a bug in a tool")
        if name == "propose_settings_update":
            if "title" not in arguments:
                return ToolOutcome(content=None, error="title is required")
            proposal = {
                "id": "p_1",
                "tool": name,
                "changes": [{"field": "title", "after": arguments["title"]}],
            }
            return ToolOutcome(content="proposal p_1 created", proposal=proposal)
        if name == "open_screen":
            return ToolOutcome(content="moved", screen={"path": "/admin/settings"})
        return ToolOutcome(content=self.result)


@pytest.fixture
def toolbox() -> FakeToolbox:
    return FakeToolbox()


@pytest.fixture
def ai_runtime(runtime: Runtime) -> Runtime:
    """WEBHOOK_ALLOW_PRIVATE: the hosted kinds may reach the stand-in on 127.0.0.1."""
    environ = {**runtime.settings.environ, "WEBHOOK_ALLOW_PRIVATE": "true"}
    return dataclasses.replace(
        runtime, settings=dataclasses.replace(runtime.settings, environ=environ)
    )


@pytest.fixture
async def model(aiohttp_server: Any) -> tuple[Script, str]:
    script = Script()
    server = await aiohttp_server(make_app(script))
    return script, str(server.make_url("")).rstrip("/")


@pytest.fixture
def make_cms(
    ai_runtime: Runtime, aiohttp_client: Any, toolbox: FakeToolbox
) -> Callable[..., Awaitable[Any]]:
    async def make(runtime: Runtime | None = None, **env: str) -> Any:
        rt = runtime or ai_runtime
        if env:
            environ = {**rt.settings.environ, **env}
            rt = dataclasses.replace(rt, settings=dataclasses.replace(rt.settings, environ=environ))
        service = ContentService(rt, ContentOptions(assistant_toolbox=toolbox))
        return await aiohttp_client(service.create_app())

    return make


@pytest.fixture
async def cms(make_cms: Callable[..., Awaitable[Any]]) -> Any:
    return await make_cms()


def parse_sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in text.strip().split("\n\n"):
        name = data = ""
        for line in block.splitlines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data = line[6:]
        if name:
            events.append((name, json.loads(data)))
    return events


def url_for(kind: str, base: str) -> str:
    return {"openai": base + "/v1", "anthropic": base, "ollama": base}[kind]


async def connect(client: Any, headers: dict[str, str], kind: str, base: str, **extra: Any) -> Any:
    body: dict[str, Any] = {"kind": kind, "model": "test-model", **extra}
    if kind != "ollama-cloud":
        body.setdefault("baseUrl", url_for(kind, base))
    if kind != "ollama":
        body.setdefault("apiKey", SECRET_KEY)
    return await client.put("/api/assistant/provider", json=body, headers=headers)


async def converse(
    client: Any, headers: dict[str, str], text: str
) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    resp = await client.post("/api/assistant/conversations", json={}, headers=headers)
    assert resp.status == 201, await resp.text()
    conversation = (await resp.json())["id"]
    resp = await client.post(
        f"/api/assistant/conversations/{conversation}/messages",
        json={"text": text},
        headers=headers,
    )
    assert resp.status == 200, await resp.text()
    assert resp.headers["Content-Type"].startswith("text/event-stream")
    return conversation, parse_sse(await resp.text())


# The tool tests' world.

VISUAL = {
    "page": {
        "fields": {"heading": "h1", "body": ".body"},
        "sections": [
            {"id": "hero", "label": "Hero", "selector": ".hero", "fields": ["heading"]},
            {"id": "story", "label": "Story", "selector": ".story", "fields": ["body"]},
            {"id": "contact", "label": "Contact", "selector": ".contact", "movable": False},
        ],
    }
}
PAGE_FIELDS = [
    {"key": "heading", "type": "text"},
    {"key": "body", "type": "textarea"},
    {"key": "rating", "type": "number", "min": 0, "max": 5},
]


@dataclass
class World:
    client: Any
    ctx: Context
    team: dict[str, Person]
    about: str  # a published page
    draft: str  # an editor's draft page
    media: str

    async def principal(self, person: Person) -> Principal:
        """The person as a credential resolves them now (re-read, as every request does)."""
        user = await people.get_user(self.ctx, person.id)
        return Principal(user=User(user.id, user.email, user.name, user.role), kind="session")

    async def call(
        self, person: Person, name: str, arguments: dict[str, Any], conversation: str = "c1"
    ) -> ToolOutcome:
        principal = await self.principal(person)
        return await TOOLBOX.call(self.ctx, principal, conversation, name, arguments)

    async def get(self, path: str, person: Person | None = None) -> Any:
        resp = await self.client.get(path, headers=(person or self.team["owner"]).headers)
        assert resp.status == 200, await resp.text()
        return await resp.json()

    async def send(
        self, method: str, path: str, person: Person | None = None, **kwargs: Any
    ) -> Any:
        who = person or self.team["owner"]
        resp = await self.client.request(method, path, headers=who.headers, **kwargs)
        assert resp.status < 300, await resp.text()
        return await resp.json() if resp.status != 204 else None

    async def apply(self, person: Person, proposal: str, **body: Any) -> Any:
        return await self.client.post(
            f"/api/assistant/proposals/{proposal}/apply", json=body, headers=person.headers
        )


@pytest.fixture
async def world(start: Start, team: dict[str, Person], runtime: Any, clock: Any) -> World:
    _, client = await start(visual=VISUAL)
    ctx = client.server.app[CONTEXT]
    owner = team["owner"]
    await client.post(
        "/api/types",
        json={"name": "page", "label": "Page", "fields": PAGE_FIELDS},
        headers=owner.headers,
    )
    editor = team["editor"]
    about = await client.post(
        "/api/entries",
        json={
            "type": "page",
            "title": "About us",
            "data": {"heading": "Who we are", "body": "Hello"},
            "status": "published",
        },
        headers=editor.headers,
    )
    assert about.status == 201, await about.text()
    draft = await client.post(
        "/api/entries",
        json={"type": "page", "title": "Plans", "data": {"heading": "Soon"}},
        headers=editor.headers,
    )
    media = await make_media(runtime.db, clock)
    return World(
        client,
        ctx,
        team,
        (await about.json())["id"],
        (await draft.json())["id"],
        media,
    )
