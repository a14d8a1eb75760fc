"""Design surfaces: the host's and a plugin's, overrides, delivery, and what a change moves.

The host declares `header` (tests/content/conftest.py); the sample `gallery`
plugin declares `frame`, served as `gallery.frame` while the plugin is active.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from aiohttp import web
from standardwebhooks.webhooks import Webhook as ReferenceVerifier

from common.clock import ManualClock
from tests.content.conftest import Start
from tests.content.factories import make_agent_key, make_delivery_key
from tests.content.test_realtime import (
    base,
    frame,
    key_ticket,
    nothing_pending,
    open_socket,
    session_ticket,
    subscribe,
)


@pytest.fixture
def clock() -> ManualClock:
    # The reference verifier compares webhook-timestamp with the wall clock.
    return ManualClock(datetime.now(UTC).replace(microsecond=0))


async def design(cms: Any, headers: dict[str, str]) -> dict[str, dict[str, Any]]:
    resp = await cms.get("/api/design", headers=headers)
    assert resp.status == 200, await resp.text()
    return {s["id"]: s for s in (await resp.json())["data"]}


def props(surface: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["key"]: p for p in surface["properties"]}


async def test_the_host_and_active_plugins_declare_surfaces(start: Start, team: Any) -> None:
    _, cms = await start()
    admin = team["admin"].headers
    surfaces = await design(cms, admin)
    assert list(surfaces) == ["header", "gallery.frame"]
    header = surfaces["header"]
    assert (header["source"], header["selector"], header["label"]) == (
        "host",
        ":root",
        "Site header",
    )
    assert props(header)["background"] == {
        "key": "background",
        "type": "color",
        "label": "background",
        "description": "",
        "default": "#ffffff",
        "options": [],
        "value": None,
        "effective": "#ffffff",
    }
    assert surfaces["gallery.frame"]["source"] == "gallery"
    # get_design needs settings.manage: editors are refused, admins' keys may read.
    assert (await cms.get("/api/design", headers=team["editor"].headers)).status == 403


async def test_overrides_are_validated_stored_and_removable(
    start: Start, team: Any, runtime: Any, clock: Any
) -> None:
    service, cms = await start()
    admin = team["admin"].headers
    version = service.content_version()
    changed = await cms.patch(
        "/api/design/header",
        json={
            "background": "#FFAA00",
            "padding": " 8px  1.5rem ",
            "font": '"Source Serif 4", serif',
        },
        headers=admin,
    )
    assert changed.status == 200, await changed.text()
    values = {k: p["value"] for k, p in props(await changed.json()).items()}
    assert values == {
        "background": "#ffaa00",
        "padding": "8px 1.5rem",
        "font": '"Source Serif 4", serif',
    }
    assert service.content_version() > version
    bad = await cms.patch(
        "/api/design/header",
        json={
            "background": "red",
            "padding": "-4px",
            "font": "Arial; } body { display: none",
            "shadow": "#000",
        },
        headers=admin,
    )
    assert bad.status == 400 and (await bad.json())["code"] == "VALIDATION_FAILED"
    fields = {f["key"]: f["message"] for f in (await bad.json())["details"]["fields"]}
    assert set(fields) == {"background", "padding", "font", "shadow"}
    assert fields["shadow"] == "is not a property of the header surface"
    assert fields["background"].startswith("must be a hex colour")
    for value in (12, ["8px"], "8px 8px 8px 8px 8px", "1e3px", "url(x)"):
        refused = await cms.patch("/api/design/header", json={"padding": value}, headers=admin)
        assert refused.status == 400, value
    # The refused bodies changed nothing.
    assert props((await design(cms, admin))["header"])["background"]["value"] == "#ffaa00"
    # null removes an override: the default applies again.
    removed = await cms.patch("/api/design/header", json={"background": None}, headers=admin)
    background = props(await removed.json())["background"]
    assert background["value"] is None and background["effective"] == "#ffffff"
    reset = await cms.delete("/api/design/header", headers=admin)
    assert all(p["value"] is None for p in (await reset.json())["properties"])
    assert (await cms.patch("/api/design/footer", json={}, headers=admin)).status == 404
    assert (
        await cms.patch("/api/design/header", json={"padding": "0"}, headers=team["editor"].headers)
    ).status == 403
    # A key granted settings.manage may propose and apply design changes.
    key = await make_agent_key(runtime.db, clock, team["admin"].id, ["settings.manage"])
    by_key = await cms.patch(
        "/api/design/header", json={"padding": "0"}, headers={"Authorization": f"Bearer {key}"}
    )
    assert by_key.status == 200
    log = await (await cms.get("/api/activity?subjectKind=design&limit=100", headers=admin)).json()
    actions = [(a["action"], a["subject"]["id"], a["summary"]) for a in log["data"]]
    assert actions[0] == (
        "design.updated",
        "header",
        {"set": {"padding": "0"}, "removed": [], "before": {}},
    )
    assert actions[2][2] == {
        "set": {},
        "removed": ["background"],
        "before": {"background": "#ffaa00"},
    }
    assert len(actions) == 4  # the refused bodies recorded nothing
    # Saving what is stored records nothing more.
    await cms.patch("/api/design/header", json={"padding": "0"}, headers=admin)
    again = await (await cms.get("/api/activity?subjectKind=design", headers=admin)).json()
    assert len(again["data"]) == 4


async def test_the_site_receives_the_effective_values_and_css(
    start: Start, team: Any, runtime: Any, clock: Any
) -> None:
    _, cms = await start()
    admin = team["admin"].headers
    key = {"X-Api-Key": await make_delivery_key(runtime.db, clock, ["*"])}
    first = await cms.get("/site/design", headers=key)
    assert first.status == 200
    body = await first.json()
    assert body["surfaces"]["header"] == {
        "selector": ":root",
        "values": {"background": "#ffffff", "padding": "1rem"},
    }
    assert body["surfaces"]["gallery.frame"]["values"]["border"] == "#222222"
    await cms.patch("/api/design/gallery.frame", json={"border": "#00FF00"}, headers=admin)
    second = await (await cms.get("/site/design", headers=key)).json()
    assert second["surfaces"]["gallery.frame"]["values"]["border"] == "#00ff00"
    assert (
        ".gallery { --gallery-frame-border: #00ff00; --gallery-frame-caption-font:"
        in (second["css"])
    )
    assert ":root { --header-background: #ffffff; --header-padding: 1rem }" in second["css"]
    assert first.headers["ETag"] != (await cms.get("/site/design", headers=key)).headers["ETag"]
    # The admin API's credentials are refused on delivery.
    assert (await cms.get("/site/design", headers=admin)).status == 401
    # A disabled plugin's surface is neither offered nor delivered; its override is kept.
    await cms.patch("/api/plugins/gallery", json={"enabled": False}, headers=admin)
    assert list(await design(cms, admin)) == ["header"]
    off = await (await cms.get("/site/design", headers=key)).json()
    assert "gallery.frame" not in off["surfaces"] and ".gallery" not in off["css"]
    gone = await cms.patch("/api/design/gallery.frame", json={"border": "#000"}, headers=admin)
    assert gone.status == 404
    await cms.patch("/api/plugins/gallery", json={"enabled": True}, headers=admin)
    back = await (await cms.get("/site/design", headers=key)).json()
    assert back["surfaces"]["gallery.frame"]["values"]["border"] == "#00ff00"


class Receiver:
    def __init__(self) -> None:
        self.received: list[tuple[dict[str, str], bytes]] = []

    async def handle(self, request: web.Request) -> web.Response:
        self.received.append((dict(request.headers), await request.read()))
        return web.Response(text="ok")


async def test_webhooks_and_the_socket_hear_design_and_plugin_changes(
    start: Start, team: Any, runtime: Any, aiohttp_server: Any
) -> None:
    receiver = Receiver()
    app = web.Application()
    app.router.add_post("/hook", receiver.handle)
    server = await aiohttp_server(app)
    _, cms = await start()
    admin = team["admin"].headers
    created = await cms.post(
        "/api/webhooks",
        json={
            "name": "site",
            "url": str(server.make_url("/hook")),
            "events": ["design.updated", "plugin.disabled"],
        },
        headers=admin,
    )
    assert created.status == 201, await created.text()
    secret = (await created.json())["secret"]
    ws = await open_socket(base(cms), await session_ticket(cms, team["viewer"].headers))
    assert (await subscribe(ws, "site"))["type"] == "subscribed"
    key = await make_delivery_key(runtime.db, runtime.clock, ["*"])
    website = await open_socket(base(cms), await key_ticket(cms, key))
    assert (await subscribe(website, "site"))["type"] == "subscribed"
    await cms.patch("/api/design/header", json={"padding": "2rem"}, headers=admin)
    assert await frame(ws) == {
        "topic": "site",
        "event": "design.updated",
        "data": {"id": "header", "slug": None, "type": "design"},
    }
    await cms.patch("/api/plugins/gallery", json={"enabled": False}, headers=admin)
    assert (await frame(ws))["data"] == {"id": "gallery", "slug": None, "type": "plugin"}
    # A delivery key hears only the spec's three entry events: websites use webhooks here.
    await nothing_pending(website)
    await ws.close()
    await website.close()
    await runtime.jobs.run_due()
    payloads = [
        ReferenceVerifier(secret).verify(body, headers) for headers, body in receiver.received
    ]
    assert sorted((p["type"], json.dumps(p["data"])) for p in payloads) == [
        ("design.updated", '{"design": "header"}'),
        ("plugin.disabled", '{"plugin": "gallery"}'),
    ]
