"""JMAP push is the plan's jmap_push feature (mail/billing/), asked through mail/directory/."""

from __future__ import annotations

import asyncio
import tomllib

import requests

from mail.billing import plans
from tests.mail.billing_helpers import PLANS_TOML
from tests.mta.jmap.conftest import Mailbox, Server

CORE = ["urn:ietf:params:jmap:core"]


async def test_push_needs_the_plans_jmap_push_feature(
    jmap_server: Server, alice: Mailbox, db, clock
) -> None:
    def eventsource() -> requests.Response:
        return requests.get(
            f"{jmap_server.url}/jmap/eventsource?types=*&closeafter=state&ping=0",
            headers={"Authorization": alice.basic},
            timeout=10,
            stream=True,
        )

    # The built-in plan (no PLANS_FILE): push works.
    allowed = await asyncio.to_thread(eventsource)
    assert allowed.status_code == 200
    allowed.close()

    # The operator's starter plan has no jmap_push: EventSource is 402, subscriptions refused.
    async with db.transaction() as conn:
        await plans.sync(conn, plans.parse(tomllib.loads(PLANS_TOML)), clock.now())
    refused = await asyncio.to_thread(eventsource)
    assert refused.status_code == 402 and "jmap_push" in refused.text
    create = {
        "deviceClientId": "phone",
        "url": "https://push.example.org/x",
    }
    answer = await jmap_server.post(
        alice.basic,
        {"using": CORE, "methodCalls": [["PushSubscription/set", {"create": {"a": create}}, "0"]]},
    )
    result = answer.json()["methodResponses"][0][1]
    assert result["notCreated"]["a"]["type"] == "forbidden"
    assert "jmap_push" in result["notCreated"]["a"]["description"]
    assert await db.fetch_val("SELECT count(*) FROM mta.push_subscriptions") == 0
