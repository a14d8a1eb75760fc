"""The POP3 store adapter: an address's Inbox as RFC 1939's numbered maildrop.

At sign-in the Inbox is listed oldest first (mta/store/emails.py
``oldest_first``): message numbers and sizes hold for the session, as RFC
1939 requires, while JMAP, webmail and SMTP go on changing the mailbox. The
unique-id (UIDL) of a message is its email id, which never changes and is
never reused. DELE only marks; QUIT in the TRANSACTION state expunges the
marked messages in one transaction (``remove_from_mailbox``: destroyed when
only in the Inbox, else taken out of it), which the change log tells JMAP
and webmail. A message deleted elsewhere meanwhile reads as an error; one
that arrived meanwhile is seen at the next sign-in.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass, field

from common.blobs import BlobNotFound
from mail.directory import Principal
from mta.context import MtaContext
from mta.store import emails, mailboxes
from mta.store.emails import Listed


class Gone(Exception):
    """The message's content is no longer stored (deleted elsewhere meanwhile)."""


@dataclass
class Maildrop:
    ctx: MtaContext
    principal: Principal
    mailbox_id: str | None
    messages: list[Listed]
    deleted: set[int] = field(default_factory=set)

    @classmethod
    async def open(cls, ctx: MtaContext, principal: Principal) -> Maildrop:
        async with ctx.runtime.db.connection() as conn:
            inbox = await mailboxes.with_role(conn, principal.address_id, "inbox")
            listed = await emails.oldest_first(conn, inbox) if inbox else []
        return cls(ctx, principal, inbox, listed)

    def get(self, number: int) -> Listed | None:
        """Message ``number`` (1-based) unless out of range or marked deleted."""
        if not 1 <= number <= len(self.messages) or number in self.deleted:
            return None
        return self.messages[number - 1]

    def exists(self, number: int) -> bool:
        return 1 <= number <= len(self.messages)

    def live(self) -> list[tuple[int, Listed]]:
        return [(n, m) for n, m in enumerate(self.messages, 1) if n not in self.deleted]

    def totals(self) -> tuple[int, int]:
        live = self.live()
        return len(live), sum(m.size for _, m in live)

    async def content(self, message: Listed) -> AsyncGenerator[bytes, None]:
        """The raw message in chunks, as stored (CRLF line ends)."""
        try:
            async for chunk in self.ctx.blobs.open(message.blob_id):
                yield chunk
        except BlobNotFound:
            raise Gone from None

    async def commit(self) -> int:
        """Expunge the marked messages (the UPDATE state); how many were removed."""
        if not self.deleted or self.mailbox_id is None:
            return 0
        ids = [self.messages[n - 1].id for n in sorted(self.deleted)]
        async with self.ctx.runtime.db.transaction() as conn:
            removed = await emails.remove_from_mailbox(
                conn, self.principal.address_id, self.mailbox_id, ids, self.ctx.runtime.clock.now()
            )
        return len(removed)
