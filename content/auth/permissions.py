"""Roles, named permissions and the capabilities no key may hold: one table.

The table is mirrored in docs/content.md. A person's permissions come from
their role alone; an agent key's are its ticked grants intersected with its
account's current role, minus :data:`KEY_FORBIDDEN`, re-computed on every
request so a demotion narrows the key at once.
"""

from __future__ import annotations

from collections.abc import Iterable

ROLES: tuple[str, ...] = ("viewer", "author", "editor", "admin", "owner")
RANK = {role: i for i, role in enumerate(ROLES)}

# The named permissions of the spec: what an agent key may be granted.
PERMISSIONS: tuple[str, ...] = (
    "content.read",
    "content.write",
    "content.publish",
    "types.manage",
    "media.manage",
    "taxonomy.manage",
    "settings.manage",
    "menus.manage",
    "plugins.manage",
    "users.manage",
    "keys.manage",
    "webhooks.manage",
    "social.write",
    "social.publish",
    "social.manage",
)

# Capabilities only a person holds. No key can hold these, whatever is ticked
# and whatever role its account has (spec, Authentication rule 5).
KEY_FORBIDDEN: frozenset[str] = frozenset(
    {
        "users.create",  # add a user
        "keys.mint",  # mint an agent key or a delivery key
        "social.connect",  # connect a social account
        "plugins.install",  # install a plugin
        "ai.spend",  # spend the AI provider budget
        # Taking over an account (issue 11): a key holding either could set
        # its person's password and sign in as them, escaping every rule above.
        "account.manage",  # your own email, password and sessions
        "users.control",  # anyone's password or email; granting, removing or deleting admins
    }
)

_VIEWER = {"content.read"}
# What every person may do for themselves, and no key on their behalf.
_SELF = {"keys.mint", "account.manage"}
_AUTHOR = _VIEWER | _SELF | {"content.write", "media.manage", "social.write", "ai.spend"}
_EDITOR = _AUTHOR | {"content.publish", "taxonomy.manage", "menus.manage", "social.publish"}
_ADMIN = _EDITOR | {
    "types.manage",
    "settings.manage",
    "plugins.manage",
    "users.manage",
    "keys.manage",
    "webhooks.manage",
    "social.manage",
    "users.create",
    "users.control",
    "social.connect",
    "plugins.install",
}

ROLE_PERMISSIONS: dict[str, frozenset[str]] = {
    "viewer": frozenset(_VIEWER | _SELF),
    "author": frozenset(_AUTHOR),
    "editor": frozenset(_EDITOR),
    "admin": frozenset(_ADMIN),
    "owner": frozenset(_ADMIN),
}


def role_permissions(role: str) -> frozenset[str]:
    return ROLE_PERMISSIONS.get(role, frozenset())


def key_permissions(role: str, grants: Iterable[str]) -> frozenset[str]:
    """What an agent key may do right now: grants capped by the role, never the banned five."""
    return (frozenset(grants) & role_permissions(role)) - KEY_FORBIDDEN


def outranks(actor_role: str, role: str) -> bool:
    """True when ``role`` is above ``actor_role`` on the ladder."""
    return RANK[role] > RANK[actor_role]
