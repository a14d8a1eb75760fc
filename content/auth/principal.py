"""Who is calling: a person through a session, or a program through an agent key."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from common.records import Record
from content.auth.permissions import key_permissions, role_permissions

CredentialKind = Literal["session", "agent_key"]


@dataclass(frozen=True)
class User(Record):
    """The person behind a credential, as far as permissions need them."""

    id: str
    email: str
    name: str
    role: str


@dataclass(frozen=True)
class Actor:
    """Who made a change, as activity records and revisions keep it."""

    kind: str  # user, agent_key or system
    name: str
    user_id: str | None = None
    key_id: str | None = None
    key_name: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The actor stored with a revision (and shown by GET .../revisions)."""
        return {
            "kind": self.kind,
            "userId": self.user_id,
            "name": self.name,
            "keyId": self.key_id,
            "keyName": self.key_name,
        }


@dataclass(frozen=True)
class Principal:
    user: User
    kind: CredentialKind
    session_id: int | None = None
    key_id: str | None = None
    key_name: str = ""
    grants: frozenset[str] = field(default_factory=frozenset)
    via_cookie: bool = False

    @property
    def permissions(self) -> frozenset[str]:
        if self.kind == "agent_key":
            return key_permissions(self.user.role, self.grants)
        return role_permissions(self.user.role)

    def can(self, permission: str) -> bool:
        return permission in self.permissions

    def actor(self) -> Actor:
        """The actor stored in activity and revisions."""
        return Actor(
            kind=self.kind if self.kind == "agent_key" else "user",
            user_id=self.user.id,
            name=self.user.name or self.user.email,
            key_id=self.key_id,
            key_name=self.key_name or None,
        )


SYSTEM_ACTOR = Actor(kind="system", name="scheduler")
