"""A recovery reset signs the mailbox out of webmail: the real hook, a real session."""

from __future__ import annotations

from tests.mail.hosting_fixtures import settings  # noqa: F401
from tests.mail.test_recovery import NEW_PASSWORD, OLD_PASSWORD, link_token, mailbox, request


async def test_a_recovery_reset_ends_the_mailboxs_webmail_sessions(client, runtime):
    await mailbox(client, runtime, "ann@elsewhere.example")
    login = await client.post(
        "/api/mail/login", json={"email": "ann@rescue.example", "password": OLD_PASSWORD}
    )
    assert login.status == 200
    webmail = login.cookies["svc_webmail"].value
    assert (await client.get("/api/mail/me", cookies={"svc_webmail": webmail})).status == 200
    await request(client, "ann@rescue.example")
    token = await link_token(runtime)
    done = await client.post("/api/recover/reset", json={"token": token, "password": NEW_PASSWORD})
    assert done.status == 200, await done.text()
    client.session.cookie_jar.clear()
    assert (await client.get("/api/mail/me", cookies={"svc_webmail": webmail})).status == 401
