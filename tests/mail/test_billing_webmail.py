"""Webmail's send counts against the plan's sends_per_month, like the sending API and submission."""

from __future__ import annotations

import tomllib
from typing import Any

from mail.billing import plans
from tests.mail.billing_helpers import PLANS_TOML
from tests.mail.webmail_helpers import Mailbox, make_mailbox, sign_in
from tests.mta.conftest import dns_server, mta_config, mta_ctx  # noqa: F401


async def test_webmail_send_over_the_monthly_sends_is_413(client, mta_ctx: Any, clock) -> None:  # noqa: F811
    alice: Mailbox = await make_mailbox(mta_ctx, "alice@example.test")
    await sign_in(client, alice.email)
    async with alice.db.transaction() as conn:  # the default plan: 2 sends a month
        await plans.sync(conn, plans.parse(tomllib.loads(PLANS_TOML)), clock.now())
    message = {"to": "bob@example.com", "subject": "Hi", "text": "x"}
    for _ in range(2):
        resp = await client.post("/api/mail/send", json=message)
        assert resp.status == 201, await resp.text()
    resp = await client.post("/api/mail/send", json=message)
    body = await resp.json()
    assert resp.status == 413 and body["name"] == "quota_exceeded", body
    assert "sends_per_month" in body["message"]
    queued = await alice.db.fetch_val(
        "SELECT count(*) FROM mta.outbound_messages WHERE source = 'webmail'"
    )
    assert queued == 2
