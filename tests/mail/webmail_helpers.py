"""Webmail test helpers: a mailbox with a real password, mail delivered the daemon's way."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from common.db import Database
from mta.context import MtaContext
from mta.store import mailboxes
from tests.mail.factories import PASSWORD, PASSWORD_HASH
from tests.mta import factories
from tests.mta.jmap_email import deliver_to

__all__ = ["PASSWORD", "Mailbox", "make_mailbox", "sign_in"]


@dataclass
class Mailbox:
    ctx: MtaContext
    email: str
    address_id: str
    account_id: str
    roles: dict[str, str]

    @property
    def db(self) -> Database:
        return self.ctx.runtime.db

    async def deliver(self, raw: bytes, *, mail_from: str = "sender@remote.test") -> str:
        """Deliver ``raw`` as the SMTP daemon does after DATA; the new message's id."""
        return await deliver_to(self.ctx, self.email, self.address_id, raw, mail_from)


async def make_mailbox(ctx: MtaContext, email: str) -> Mailbox:
    db = ctx.runtime.db
    ids = await factories.mailbox_owner(db, email)
    await db.execute(
        "UPDATE mail.addresses SET password_hash = %s WHERE id = %s",
        (PASSWORD_HASH, ids["address_id"]),
    )
    async with db.transaction() as conn:
        roles = await mailboxes.ensure_defaults(conn, ids["address_id"], ctx.runtime.clock.now())
    return Mailbox(ctx, email, ids["address_id"], ids["account_id"], roles)


async def sign_in(client: Any, email: str, password: str = PASSWORD) -> Any:
    """Sign in over HTTP; the client keeps the svc_webmail cookie."""
    resp = await client.post("/api/mail/login", json={"email": email, "password": password})
    assert resp.status == 200, await resp.text()
    return resp
