"""Plugins from PLUGIN_DIR: state, autoenable, settings, isolation, routes, restarts.

The sample plugins in tests/content/plugin_dir are loaded the way a site's
are: `gallery` (settings of every type, hooks, a guarded and a public route,
a design surface), `crashy` (a hook that raises) and `broken` (its import
raises). Each test builds the service from the environment and runs its
lifespan, so a "restart" is a second service object on the same database.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from common.clock import Clock
from common.db import Database
from common.migrations import MigrationSet, migrate
from content.design.surfaces import DeclarationError
from content.options import ContentOptions
from content.plugins import HookEvent, Plugin, PluginContext, Property, Surface, store
from content.plugins import service as plugin_service
from content.plugins.loader import MODULE_PREFIX
from content.service import ContentService
from tests.content.conftest import PLUGIN_ENV, Start
from tests.content.factories import make_agent_key, make_delivery_key, make_type, make_user
from tests.content.test_realtime import frame, open_socket, subscribe


def heard() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """What the gallery plugin's hooks were told (the module as the loader imported it)."""
    return sys.modules[MODULE_PREFIX + "gallery"].HEARD  # type: ignore[no-any-return]


async def plugins(cms: Any, headers: dict[str, str]) -> dict[str, dict[str, Any]]:
    resp = await cms.get("/api/plugins", headers=headers)
    assert resp.status == 200, await resp.text()
    return {p["name"]: p for p in (await resp.json())["data"]}


async def patch(cms: Any, headers: dict[str, str], name: str, body: Any) -> Any:
    return await cms.patch(f"/api/plugins/{name}", json=body, headers=headers)


async def activity(cms: Any, headers: dict[str, str], kind: str) -> list[dict[str, Any]]:
    resp = await cms.get(f"/api/activity?subjectKind={kind}&limit=100", headers=headers)
    return list((await resp.json())["data"])


async def test_plugins_are_scanned_and_autoenabled_on_a_fresh_install_only(
    start: Start, team: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    _, cms = await start()
    admin = team["admin"].headers
    found = await plugins(cms, admin)
    assert set(found) == {"gallery", "crashy", "broken"}
    gallery = found["gallery"]
    assert (gallery["status"], gallery["enabled"], gallery["version"]) == ("active", True, "1.2.0")
    assert gallery["settings"] == {
        "columns": 3,
        "caption": "",
        "layout": "grid",
        "showDates": False,
        "accent": "#336699",
        "ratio": 1.5,
    }
    assert {s["key"]: s["type"] for s in gallery["settingsSchema"]}["columns"] == "integer"
    assert gallery["hooks"] == ["entry.created", "entry.published"]
    assert gallery["routes"][0] == {
        "method": "GET",
        "path": "/api/plugins/gallery/albums",
        "permission": "content.read",
    }
    assert gallery["surfaces"] == ["gallery.frame"]
    assert found["crashy"]["status"] == "inactive"
    # The plugin whose import raises is recorded, named, and left disabled;
    # the other plugins and the service run.
    broken = found["broken"]
    assert broken["status"] == "failed" and not broken["enabled"]
    assert broken["error"]["where"] == "load"
    assert "ValueError: broken on purpose" in broken["error"]["message"]
    assert "plugin broken failed to load" in caplog.text
    assert "PLUGIN_AUTOENABLE names absent, which is not in PLUGIN_DIR" in caplog.text
    [enabled] = [a for a in await activity(cms, admin, "plugin") if a["action"] == "plugin.enabled"]
    assert enabled["actor"]["kind"] == "system" and enabled["subject"]["id"] == "gallery"

    assert (await patch(cms, admin, "gallery", {"enabled": False})).status == 200
    await cms.close()
    # The second start of the same site: PLUGIN_AUTOENABLE is not applied again.
    _, cms = await start()
    again = await plugins(cms, admin)
    assert again["gallery"]["status"] == "inactive"
    assert again["broken"]["status"] == "failed"


async def test_settings_take_only_declared_keys_of_declared_types(start: Start, team: Any) -> None:
    _, cms = await start()
    admin = team["admin"].headers
    ok = await patch(cms, admin, "gallery", {"settings": {"columns": 5, "accent": "#AABBCC"}})
    assert ok.status == 200, await ok.text()
    assert (await ok.json())["settings"]["columns"] == 5
    assert (await ok.json())["settings"]["accent"] == "#aabbcc"
    bad = await patch(
        cms,
        admin,
        "gallery",
        {
            "settings": {
                "columns": "4",
                "ratio": 0,
                "layout": "list",
                "showDates": "yes",
                "unknown": 1,
                "caption": "x" * 81,
            }
        },
    )
    assert bad.status == 400
    body = await bad.json()
    assert body["code"] == "VALIDATION_FAILED"
    messages = {f["key"]: f["message"] for f in body["details"]["fields"]}
    assert set(messages) == {
        "settings.columns",
        "settings.ratio",
        "settings.layout",
        "settings.showDates",
        "settings.unknown",
        "settings.caption",
    }
    assert "is not a setting of the gallery plugin" in messages["settings.unknown"]
    assert "whole number" in messages["settings.columns"]
    assert "grid, masonry" in messages["settings.layout"]
    # Nothing of a refused body is kept.
    assert (await plugins(cms, admin))["gallery"]["settings"]["columns"] == 5
    too_many = await patch(cms, admin, "gallery", {"settings": {"columns": 9}})
    assert (await too_many.json())["details"]["fields"][0]["message"].startswith(
        "must be at most 6"
    )
    # null restores the declared default.
    reset = await patch(cms, admin, "gallery", {"settings": {"columns": None}})
    assert (await reset.json())["settings"]["columns"] == 3
    for body in ({"enabled": "yes"}, {"settings": []}, {"state": "on"}):
        refused = await patch(cms, admin, "gallery", body)
        assert refused.status == 400 and (await refused.json())["code"] == "VALIDATION_FAILED"
    updates = [a for a in await activity(cms, admin, "plugin") if a["action"] == "plugin.updated"]
    assert [u["summary"]["settings"] for u in updates] == [["columns"], ["accent", "columns"]]
    assert updates[0]["summary"] == {"settings": ["columns"], "before": {"columns": 5}, "after": {}}
    assert (await patch(cms, admin, "nope", {"enabled": False})).status == 404
    unavailable = await patch(cms, team["owner"].headers, "broken", {"enabled": True})
    assert unavailable.status == 409
    assert (await unavailable.json())["code"] == "PLUGIN_UNAVAILABLE"


async def test_no_key_can_enable_a_plugin(
    start: Start, team: Any, runtime: Any, clock: Any
) -> None:
    _, cms = await start()
    owner = team["owner"]
    agent = await make_agent_key(runtime.db, clock, owner.id, ["plugins.manage"])
    as_key = {"Authorization": f"Bearer {agent}"}
    refused = await patch(cms, as_key, "crashy", {"enabled": True})
    assert refused.status == 403
    assert (await refused.json())["code"] == "KEY_FORBIDDEN"
    assert (await refused.json())["details"] == {"permission": "plugins.install"}
    delivery = await make_delivery_key(runtime.db, clock, ["*"])
    for headers in ({"X-Api-Key": delivery}, {"Authorization": f"Bearer {delivery}"}):
        wrong = await patch(cms, headers, "crashy", {"enabled": True})
        assert wrong.status == 401 and (await wrong.json())["code"] == "WRONG_CREDENTIAL"
    # An editor lacks plugins.manage; an admin (a person) may enable.
    assert (await patch(cms, team["editor"].headers, "crashy", {"enabled": True})).status == 403
    assert (await plugins(cms, owner.headers))["crashy"]["status"] == "inactive"
    # What a key granted plugins.manage may do: read, configure, disable.
    assert (await cms.get("/api/plugins", headers=as_key)).status == 200
    configured = await patch(cms, as_key, "gallery", {"settings": {"columns": 2}})
    assert configured.status == 200
    disabled = await patch(cms, as_key, "gallery", {"enabled": False})
    assert (await disabled.json())["status"] == "inactive"
    assert (await patch(cms, as_key, "gallery", {"enabled": True})).status == 403
    enabled = await patch(cms, team["admin"].headers, "gallery", {"enabled": True})
    assert (await enabled.json())["status"] == "active"


async def test_routes_answer_only_while_the_plugin_is_active(start: Start, team: Any) -> None:
    _, cms = await start()
    viewer = team["viewer"]
    albums = await cms.get("/api/plugins/gallery/albums", headers=viewer.headers)
    assert albums.status == 200
    assert await albums.json() == {"columns": 3, "for": viewer.id}
    assert (await cms.get("/api/plugins/gallery/albums")).status == 401
    ping = await cms.get("/api/plugins/gallery/ping")
    assert await ping.json() == {"plugin": "gallery", "columns": 3}
    admin = team["admin"].headers
    await patch(cms, admin, "gallery", {"settings": {"columns": 6}})
    ping = await cms.get("/api/plugins/gallery/ping")
    assert (await ping.json())["columns"] == 6
    await patch(cms, admin, "gallery", {"enabled": False})
    for path in ("/api/plugins/gallery/albums", "/api/plugins/gallery/ping"):
        gone = await cms.get(path, headers=viewer.headers)
        assert gone.status == 404 and (await gone.json())["code"] == "NOT_FOUND"
    document = await (await cms.get("/api/openapi.json")).json()
    operation = document["paths"]["/api/plugins/gallery/albums"]["get"]
    assert operation["security"] and "Gallery plugin" in operation["summary"]
    assert "security" not in document["paths"]["/api/plugins/gallery/ping"]["get"]


async def test_a_crashing_hook_pauses_its_plugin_and_the_save_stands(
    start: Start, team: Any, runtime: Any, clock: Any, caplog: pytest.LogCaptureFixture
) -> None:
    service, cms = await start()
    await make_type(runtime.db, clock, "post", [{"key": "body", "type": "markdown"}])
    admin, editor = team["admin"].headers, team["editor"].headers
    assert (await patch(cms, admin, "crashy", {"enabled": True})).status == 200
    heard().clear()
    created = await cms.post(
        "/api/entries", json={"type": "post", "title": "First"}, headers=editor
    )
    assert created.status == 201
    entry = await created.json()
    await service.plugins.idle()
    crashy = (await plugins(cms, admin))["crashy"]
    assert crashy["status"] == "paused" and crashy["enabled"] is True
    assert crashy["error"]["where"] == "hook:entry.created"
    assert crashy["error"]["message"] == "RuntimeError: crashy cannot cope with entry.created"
    assert "plugin crashy paused" in caplog.text
    # The save stood, and the other plugin heard it with its settings.
    assert (await cms.get(f"/api/entries/{entry['id']}", headers=editor)).status == 200
    [(event, data, settings)] = heard()
    assert event == "entry.created" and data["id"] == entry["id"] and settings["columns"] == 3
    [paused] = [a for a in await activity(cms, admin, "plugin") if a["action"] == "plugin.paused"]
    assert paused["actor"]["kind"] == "system" and paused["subject"]["id"] == "crashy"
    # Paused, crashy runs no more; gallery keeps running.
    caplog.clear()
    await cms.post("/api/entries", json={"type": "post", "title": "Second"}, headers=editor)
    await service.plugins.idle()
    assert len(heard()) == 2 and "crashy" not in caplog.text
    # Enabling again resumes it and clears the error.
    resumed = await (await patch(cms, admin, "crashy", {"enabled": True})).json()
    assert resumed["status"] == "active" and resumed["error"] is None


async def test_a_hook_runs_after_the_commit_off_the_request_within_a_timeout(
    start: Start,
    team: Any,
    runtime: Any,
    clock: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    release = asyncio.Event()
    seen: list[str] = []

    async def waits(event: HookEvent, ctx: PluginContext) -> None:
        # The change is committed before any hook runs: a new connection sees it.
        async with ctx.db.connection() as conn:
            from common.db import fetch_val

            sql = "SELECT title FROM content.entries WHERE id = %s"
            seen.append(await fetch_val(conn, sql, (event.data["id"],)))
        await release.wait()

    host_plugin = Plugin(name="waiter", version="1", hooks={"entry.created": waits})
    service, cms = await start(plugins=[host_plugin])
    await make_type(runtime.db, clock, "post", [{"key": "body", "type": "markdown"}])
    await patch(cms, team["admin"].headers, "waiter", {"enabled": True})
    resp = await cms.post(
        "/api/entries", json={"type": "post", "title": "Waited"}, headers=team["editor"].headers
    )
    # The request answered while the hook is still waiting.
    assert resp.status == 201
    # Memory stays bounded behind a slow plugin: past the cap a change's hooks are skipped.
    monkeypatch.setattr(plugin_service, "MAX_PENDING_HOOKS", 1)
    skipped = await cms.post(
        "/api/entries", json={"type": "post", "title": "Skipped"}, headers=team["editor"].headers
    )
    assert skipped.status == 201
    assert "plugin hooks are 1 changes behind; entry.created" in caplog.text
    monkeypatch.undo()
    release.set()
    await service.plugins.idle()
    assert seen == ["Waited"]
    assert (await plugins(cms, team["admin"].headers))["waiter"]["status"] == "active"
    # A hook that does not finish within the timeout pauses its plugin.
    release.clear()
    service.plugins.hook_timeout = 0.05
    await cms.post(
        "/api/entries", json={"type": "post", "title": "Stuck"}, headers=team["editor"].headers
    )
    await service.plugins.idle()
    waiter = (await plugins(cms, team["admin"].headers))["waiter"]
    assert waiter["status"] == "paused" and "timed out" in waiter["error"]["message"]


async def test_state_settings_and_overrides_survive_a_restart(start: Start, team: Any) -> None:
    _, cms = await start()
    admin, owner = team["admin"].headers, team["owner"].headers
    await patch(cms, owner, "crashy", {"enabled": True})
    await patch(cms, admin, "gallery", {"settings": {"caption": "Holidays", "showDates": True}})
    changed = await cms.patch("/api/design/gallery.frame", json={"gap": "12px"}, headers=admin)
    assert changed.status == 200
    before = await plugins(cms, admin)
    await cms.close()
    _, cms = await start()
    after = await plugins(cms, admin)
    for name in ("gallery", "crashy"):
        assert after[name]["status"] == before[name]["status"] == "active"
        assert after[name]["settings"] == before[name]["settings"]
    assert after["gallery"]["settings"]["caption"] == "Holidays"
    design = {
        s["id"]: s for s in (await (await cms.get("/api/design", headers=admin)).json())["data"]
    }
    gap = {p["key"]: p for p in design["gallery.frame"]["properties"]}["gap"]
    assert gap["value"] == "12px"


async def test_a_plugin_declared_wrongly_is_refused_at_load(start: Start, team: Any) -> None:
    from content.plugins import Route, Setting

    async def handler(request: web.Request, ctx: PluginContext) -> web.Response:
        return web.Response()

    bad = [
        Plugin(name="typed", version="1", settings=[Setting("size", "integer", default="big")]),
        Plugin(name="hooked", version="1", hooks={"entry.exploded": handler}),  # type: ignore[dict-item]
        Plugin(name="routed", version="1", routes=[Route("GET", "no-slash", handler)]),
        Plugin(
            name="styled",
            version="1",
            surfaces=[Surface("box", "Box", [Property("edge", "shadow")])],
        ),
    ]
    _, cms = await start(plugins=bad)
    found = await plugins(cms, team["admin"].headers)
    errors = {
        name: found[name]["error"]["message"] for name in ("typed", "hooked", "routed", "styled")
    }
    assert all(found[n]["status"] == "failed" for n in errors)
    assert "the default of setting 'size' must be a whole number" in errors["typed"]
    assert "'entry.exploded'" in errors["hooked"]
    assert "no-slash" in errors["routed"]
    assert "'shadow'" in errors["styled"]
    assert found["gallery"]["status"] == "active"


def test_a_host_surface_declared_wrongly_stops_the_start(plugin_runtime: Any) -> None:
    wrong = [Surface("header", "Header", [Property("background", "color", default="red")])]
    with pytest.raises(DeclarationError, match="the default of 'background' must be a hex colour"):
        ContentService(plugin_runtime, ContentOptions(design_surfaces=wrong))


async def test_processes_share_plugin_state_and_a_restart_keeps_it(
    gateway_process: Any, database_url: str, db: Any
) -> None:
    """Real `python -m gateway` processes on one database, then a restart."""
    real = Clock()
    admin = await make_user(db, real, "admin")
    env = {"DATABASE_URL": database_url, **PLUGIN_ENV}
    one, two = gateway_process(env=env), gateway_process(env=env)

    async with aiohttp.ClientSession() as http:

        async def call(gw: Any, method: str, path: str, **kw: Any) -> tuple[int, Any]:
            async with http.request(method, gw.base_url + "/cms" + path, **kw) as resp:
                return resp.status, await resp.json()

        # Two processes on a fresh site: the first start applies PLUGIN_AUTOENABLE, once.
        _, log = await call(one, "GET", "/api/activity?subjectKind=plugin", headers=admin.headers)
        assert [a["action"] for a in log["data"]] == ["plugin.enabled"]
        assert (await call(two, "GET", "/api/plugins/gallery/ping"))[0] == 200
        ticket = (await call(two, "POST", "/api/realtime/ticket", headers=admin.headers))[1]
        site = await open_socket(two.base_url + "/cms", ticket["ticket"])
        await subscribe(site, "site")
        await call(
            one, "PATCH", "/api/plugins/gallery", json={"settings": {"columns": 4}},
            headers=admin.headers,
        )  # fmt: skip
        assert (await frame(site))["event"] == "plugin.updated"  # heard on process two
        assert (await call(two, "GET", "/api/plugins/gallery/ping"))[1]["columns"] == 4
        await call(
            one, "PATCH", "/api/plugins/gallery", json={"enabled": False}, headers=admin.headers
        )
        assert (await frame(site))["event"] == "plugin.disabled"
        assert (await call(two, "GET", "/api/plugins/gallery/ping"))[0] == 404
        await site.close()
        one.stop()
        two.stop()

        three = gateway_process(env=env)
        status, found = await call(three, "GET", "/api/plugins/gallery", headers=admin.headers)
        assert status == 200
        assert (found["status"], found["settings"]["columns"]) == ("inactive", 4)
        assert (await call(three, "GET", "/api/plugins/gallery/ping"))[0] == 404


async def test_a_site_upgraded_with_people_is_not_a_fresh_install(
    empty_database_url: str, tmp_path: Path, clock: Any
) -> None:
    """Migration 0055 on a site that has people: PLUGIN_AUTOENABLE never applies there."""
    import common
    import content

    earlier = tmp_path / "content-migrations"
    earlier.mkdir()
    for path in content.MIGRATIONS.files():
        if path.name < "0055":
            shutil.copy(path, earlier)
    db = await Database.connect(empty_database_url, size=2)
    try:
        await migrate(db, [common.MIGRATIONS, MigrationSet("content", earlier)])
        await make_user(db, clock, "owner")
        applied = await migrate(db, [common.MIGRATIONS, content.MIGRATIONS])
        assert any("0055" in name for name in applied)
        async with db.connection() as conn:
            assert not await store.claim_install(conn, ["gallery"], clock.now())
    finally:
        await db.close()
