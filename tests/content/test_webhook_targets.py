"""Without WEBHOOK_ALLOW_PRIVATE (the default), webhooks cannot reach inside the network."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from common.crypto import Sealer
from common.webhooks import generate_secret
from content.webhooks.service import SEAL_PURPOSE
from tests.conftest import TEST_SECRET
from tests.content.factories import make_type


async def test_private_targets_are_refused_when_saved_and_when_sent(
    cms, team, runtime, clock, aiohttp_server: Any
) -> None:
    admin = team["admin"].headers
    for url in (
        "http://127.0.0.1/hook",
        "http://10.0.0.8/",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://localhost:8080/",
    ):
        resp = await cms.post("/api/webhooks", json={"name": "x", "url": url}, headers=admin)
        assert resp.status == 400, url
        assert (await resp.json())["details"]["fields"][0]["key"] == "url"

    hits: list[str] = []

    async def handle(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_post("/hook", handle)
    server = await aiohttp_server(app)
    # A row whose target now resolves inside (saved by name, or under
    # WEBHOOK_ALLOW_PRIVATE=true): the connect-time check still refuses it.
    await runtime.db.execute(
        "INSERT INTO content.webhooks (id, name, url, secret_sealed, secret_hint, created_at,"
        " updated_at) VALUES ('w1', 'inside', %s, %s, 'whsec_', now(), now())",
        (
            str(server.make_url("/hook")).replace("127.0.0.1", "localhost"),
            Sealer(TEST_SECRET, SEAL_PURPOSE).seal(generate_secret()),
        ),
    )
    await make_type(runtime.db, clock, "post", [{"key": "body", "type": "markdown"}])
    await cms.post("/api/entries", json={"type": "post", "title": "A"}, headers=admin)
    await runtime.jobs.run_due()
    assert hits == []
    attempts = await (await cms.get("/api/webhooks/w1/attempts", headers=admin)).json()
    [attempt] = attempts["data"]
    assert attempt["ok"] is False and attempt["status"] is None
    assert "TargetRefused" in attempt["error"]
