"""What other packages may use of mail's accounts (the gateway's OAuth host adapter).

Nothing outside mail imports mail's internals; it asks a :class:`PublicAccounts`
built by :class:`mail.MailService` (``service.accounts``):

- ``load_user(db, user_id)``: the account whose integer ``number`` is ``user_id``
  (the OAuth server keeps integer user ids);
- ``account_for_request(request)``: the account of the request's live
  svc_session cookie, or None (also for a cross-site state-changing request,
  so a cookie-guarded route elsewhere gets the same CSRF defence as /api);
- ``is_instance_owner(account)``: the first account, which owns the instance;
- ``claims(account)``: sub, email and name for tokens and user info.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from mail.accounts import store
from mail.accounts.store import Account
from mail.auth import sessions
from mail.context import MailContext
from mail.web.csrf import is_cross_site_forgery

__all__ = ["Account", "PublicAccounts"]


class PublicAccounts:
    def __init__(self, ctx: MailContext) -> None:
        self._ctx = ctx

    async def load_user(self, db: Any, user_id: int) -> Account | None:
        async with self._ctx.db.connection() as conn:
            return await store.get_by_number(conn, int(user_id))

    async def load_account(self, account_id: str) -> Account | None:
        async with self._ctx.db.connection() as conn:
            return await store.get(conn, account_id)

    async def account_for_request(self, request: web.Request) -> Account | None:
        if is_cross_site_forgery(self._ctx, request):
            return None
        auth = await sessions.resolve(self._ctx, request)
        return auth.account if auth is not None else None

    @staticmethod
    def is_instance_owner(account: Account) -> bool:
        return account.is_owner

    @staticmethod
    def claims(account: Account) -> dict[str, Any]:
        return {"sub": str(account.number), "email": account.email, "name": account.name}
