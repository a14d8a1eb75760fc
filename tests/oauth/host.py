"""A small host for the OAuth server in tests: in-memory users and a header guard.

The mail service will be the real host; until then this is what a host looks
like: ``load_user`` and ``build_access_token_claims`` over its own users, and
guards that sign a user in from the ``X-Test-User`` header (the user's id).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from oauth.config import USER_ID_KEY

USER_HEADER = "X-Test-User"


@dataclass
class User:
    id: int
    email: str
    name: str
    is_admin: bool = False


@dataclass
class TestHost:
    __test__ = False

    users: dict[int, User] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)

    def add(self, user: User) -> User:
        self.users[user.id] = user
        return user

    async def load_user(self, db: Any, user_id: int) -> User | None:
        return self.users.get(user_id)

    def build_access_token_claims(self, user: User) -> dict[str, Any]:
        # A host trying to smuggle its own jti/scope/client_id must not win.
        return {"email": user.email, "name": user.name, "jti": "host-jti", "scope": "everything"}

    def _signed_in(self, request: web.Request) -> User:
        raw = request.headers.get(USER_HEADER, "")
        user = self.users.get(int(raw)) if raw.isdigit() else None
        if user is None:
            raise web.HTTPUnauthorized(text="sign in first")
        request[USER_ID_KEY] = user.id
        return user

    async def require_user(self, request: web.Request) -> None:
        self._signed_in(request)

    async def require_admin(self, request: web.Request) -> None:
        if not self._signed_in(request).is_admin:
            raise web.HTTPForbidden(text="administrators only")

    def audit(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    def event_names(self) -> list[str]:
        return [e["event"] for e in self.events]
