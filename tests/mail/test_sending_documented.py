"""The sending API's answers match the shapes its OpenAPI document declares."""

from __future__ import annotations

import jsonschema

from tests.mail.factories import signed_in
from tests.mail.hosting_fixtures import settings  # noqa: F401
from tests.mail.sending_helpers import api_key, bearer, sending_domain

MESSAGE = {
    "from": "Acme <hello@example.com>",
    "to": "ann@example.org",
    "cc": "cc@example.org",
    "subject": "Hi",
    "html": "<p>x</p>",
    "tags": [{"name": "a", "value": "b"}],
    "attachments": [{"filename": "a.txt", "content": "aGk="}],
}


async def test_answers_match_the_document(client, runtime, dns_server):
    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    key = bearer(await api_key(client, headers))
    document = await (await client.get("/api/openapi.json")).json()

    def check(path: str, method: str, body: object) -> None:
        schema = document["paths"][path][method]["responses"]["200"]["content"]["application/json"][
            "schema"
        ]
        jsonschema.validate(body, schema)

    sent = await (await client.post("/api/emails", json=MESSAGE, headers=key)).json()
    check("/api/emails", "post", sent)
    later = {**MESSAGE, "scheduled_at": "in 1 hour"}
    batch = await (await client.post("/api/emails/batch", json=[later], headers=key)).json()
    check("/api/emails/batch", "post", batch)
    check("/api/emails", "get", await (await client.get("/api/emails", headers=key)).json())
    got = await (await client.get(f"/api/emails/{sent['id']}", headers=key)).json()
    check("/api/emails/{email_id}", "get", got)
    scheduled = batch["data"][0]["id"]
    moved = await client.patch(
        f"/api/emails/{scheduled}", json={"scheduled_at": "in 2 hours"}, headers=key
    )
    check("/api/emails/{email_id}", "patch", await moved.json())
    canceled = await client.post(f"/api/emails/{scheduled}/cancel", headers=key)
    check("/api/emails/{email_id}/cancel", "post", await canceled.json())
