"""A CMS with visual pages, the sample plugins, a design surface and some content,
and the toolbox called directly as a person (no model needed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from content.assistant.toolbox import ToolOutcome
from content.assistant.tools import TOOLBOX
from content.auth.principal import Principal, User
from content.context import CONTEXT, Context
from content.people import service as people
from tests.content.conftest import Start
from tests.content.factories import Person, make_media
from tests.content.test_social import bsky  # noqa: F401 - the Bluesky stand-in fixture
from tests.content.test_webhooks import receiver  # noqa: F401 - a webhook target

# The host's visual page of the page type: three sections.
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
