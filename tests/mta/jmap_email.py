"""Helpers of the Email method tests: a mailbox, real messages delivered into it
through mta.delivery (the daemon's path after DATA), the Email functions' context."""

from __future__ import annotations

from dataclasses import dataclass
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import format_datetime
from typing import Any

from common.db import Database
from mail.directory import lookup_recipient
from mta import delivery
from mta.context import MtaContext
from mta.jmap.email.backlog import index_bodies
from mta.jmap.email.context import EmailContext
from mta.store import mailboxes
from tests.mta import factories
from tests.mta.conftest import with_config


async def deliver_to(
    ctx: MtaContext,
    address: str,
    address_id: str,
    raw: bytes,
    mail_from: str,
    *,
    index: bool = True,
) -> str:
    """Deliver ``raw`` to ``address`` as the SMTP daemon does after DATA, then run the words
    job its commit enqueued (as the gateway's job worker does right after); the new email's id.
    """
    local, _, domain = address.partition("@")
    async with ctx.runtime.db.connection() as conn:
        found = await lookup_recipient(conn, local, domain)
    assert found.mailbox is not None
    report = await delivery.deliver(
        ctx,
        delivery.Inbound(
            raw=raw,
            mail_from=mail_from,
            recipients=[(address, found.mailbox)],
            ip="192.0.2.1",
            helo="remote.test",
        ),
    )
    if index:
        async with ctx.runtime.db.connection() as conn:
            await index_bodies(conn, ctx.blobs)
    return str(report.email_ids[address_id])


@dataclass
class Box:
    """One address (a JMAP account) with its default mailboxes by role."""

    ctx: MtaContext
    email: EmailContext
    address: str
    account_id: str
    roles: dict[str, str]

    @property
    def db(self) -> Database:
        return self.ctx.runtime.db

    async def deliver(
        self, raw: bytes, *, mail_from: str = "sender@remote.test", index: bool = True
    ) -> str:
        """Deliver ``raw`` as the daemon does after DATA (``index``: and run the words job);
        the new email's id."""
        return await deliver_to(
            self.ctx, self.address, self.account_id, raw, mail_from, index=index
        )

    async def call(self, fn: Any, args: dict[str, Any], **kw: Any) -> Any:
        async with self.db.connection() as conn:
            return await fn(
                self.email, conn, self.account_id, {"accountId": self.account_id, **args}, **kw
            )


async def make_box(
    mta_ctx: MtaContext, address: str = "alice@example.test", address_id: str | None = None
) -> Box:
    """A Box for ``address``: made here, or the existing address ``address_id``."""
    ctx = with_config(mta_ctx, auth_checks=False)
    if address_id is None:
        address_id = (await factories.mailbox_owner(ctx.runtime.db, address))["address_id"]
    now = ctx.runtime.clock.now()
    async with ctx.runtime.db.transaction() as conn:
        roles = await mailboxes.ensure_defaults(conn, address_id, now)
    email_ctx = EmailContext(raw=ctx.blobs, clock=ctx.runtime.clock)
    return Box(ctx, email_ctx, address, address_id, roles)


def message(
    subject: str = "Hello",
    body: str = "Hi there",
    *,
    sender: str = "Bob Example <bob@remote.test>",
    to: str = "Alice <alice@example.test>",
    message_id: str | None = None,
    in_reply_to: str | None = None,
    html: str | None = None,
    attachments: list[tuple[str, str, bytes]] = (),  # type: ignore[assignment]
    extra: dict[str, str] | None = None,
    date: Any = None,
) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject
    if message_id:
        msg["Message-ID"] = f"<{message_id}>"
    if in_reply_to:
        msg["In-Reply-To"] = f"<{in_reply_to}>"
        msg["References"] = f"<{in_reply_to}>"
    if date is not None:
        msg["Date"] = format_datetime(date)
    for k, v in (extra or {}).items():
        msg[k] = v
    msg.set_content(body)
    if html:
        msg.add_alternative(html, subtype="html")
    for filename, ctype, data in attachments:
        maintype, subtype = ctype.split("/")
        if ctype == "message/rfc822":
            inner = BytesParser(policy=policy.default).parsebytes(data)
            msg.add_attachment(inner, filename=filename)
            continue
        msg.add_attachment(data, maintype=maintype, subtype=subtype, filename=filename)
    return msg.as_bytes().replace(b"\n", b"\r\n")
