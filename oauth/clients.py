"""Client administration: list, create, update, rotate the secret, soft-revoke.

Bodies are JSON. A client is confidential unless created with
``"public": true``; a confidential client's secret is returned once, at
creation and at each rotation, and stored as SHA-256 hex. No response ever
carries client_secret_hash. Rotation and revocation invalidate every refresh
token of the client (and the access tokens issued with them) in the same
transaction. Validation errors use RFC 7591's names (invalid_redirect_uri,
invalid_client_metadata).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from common.crypto import sha256_hex
from common.db import transaction
from oauth import audit
from oauth.errors import InvalidClientMetadata, InvalidRedirectUri, NotFound
from oauth.ids import random_id, short_id
from oauth.redirects import redirect_uri_problem
from oauth.scope import is_valid_scope_token
from oauth.server import AuthorizationServer, Call

MAX_NAME = 200
MAX_DESCRIPTION = 2000
MAX_URL = 2000
MAX_REDIRECT_URIS = 20
CREATE_FIELDS = frozenset(
    {
        "name",
        "description",
        "icon_url",
        "redirect_uris",
        "allowed_scopes",
        "scopes",
        "is_official",
        "public",
    }
)
UPDATE_FIELDS = CREATE_FIELDS - {"public"}


def view(client: Mapping[str, Any]) -> dict[str, Any]:
    """A client as the admin API shows it: never the secret's hash."""
    return {
        "id": client["id"],
        "client_id": client["client_id"],
        "name": client["name"],
        "description": client["description"],
        "icon_url": client["icon_url"],
        "redirect_uris": client["redirect_uris"],
        "allowed_scopes": client["allowed_scopes"],
        "is_official": client["is_official"],
        "public": client["client_secret_hash"] is None,
        "created_by": client["created_by"],
        "created_at": client["created_at"],
        "updated_at": client["updated_at"],
        "revoked_at": client["revoked_at"],
    }


def _text(body: Mapping[str, Any], key: str, limit: int, *, required: bool) -> str | None:
    value = body.get(key)
    if value is None:
        if required:
            raise InvalidClientMetadata(f"{key} is required")
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise InvalidClientMetadata(f"{key} must be a non-empty string")
    if len(value) > limit:
        raise InvalidClientMetadata(f"{key} is longer than {limit} characters")
    return value.strip() if required else value


def _redirect_uris(value: Any) -> list[str]:
    if not isinstance(value, list) or not value:
        raise InvalidRedirectUri("redirect_uris must be a non-empty array of absolute URIs")
    if len(value) > MAX_REDIRECT_URIS:
        raise InvalidRedirectUri(f"at most {MAX_REDIRECT_URIS} redirect_uris")
    for index, uri in enumerate(value):
        problem = redirect_uri_problem(uri)
        if problem:
            raise InvalidRedirectUri(f"redirect_uris[{index}]: {problem}")
    return list(dict.fromkeys(value))


def _scopes(server: AuthorizationServer, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(
        isinstance(s, str) and is_valid_scope_token(s) for s in value
    ):
        raise InvalidClientMetadata("allowed_scopes must be an array of scope tokens")
    unknown = [s for s in value if s not in server.scopes]
    if unknown:
        raise InvalidClientMetadata(f"scopes this server does not grant: {', '.join(unknown)}")
    return list(dict.fromkeys(value))


def _icon_url(value: str | None) -> str | None:
    if value is not None and not value.startswith(("https://", "http://")):
        raise InvalidClientMetadata("icon_url must be an http(s) URL")
    return value


def _changes(server: AuthorizationServer, body: Mapping[str, Any], *, creating: bool) -> dict:
    allowed = CREATE_FIELDS if creating else UPDATE_FIELDS
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise InvalidClientMetadata(f"unknown fields: {', '.join(unknown)}")
    if "scopes" in body and "allowed_scopes" in body:
        raise InvalidClientMetadata("send allowed_scopes or scopes, not both")
    changes: dict[str, Any] = {}
    if creating or "name" in body:
        changes["name"] = _text(body, "name", MAX_NAME, required=True)
    if "description" in body:
        changes["description"] = _text(body, "description", MAX_DESCRIPTION, required=False)
    if "icon_url" in body:
        changes["icon_url"] = _icon_url(_text(body, "icon_url", MAX_URL, required=False))
    if creating or "redirect_uris" in body:
        changes["redirect_uris"] = _redirect_uris(body.get("redirect_uris"))
    scope_key = "scopes" if "scopes" in body else "allowed_scopes"
    if creating or scope_key in body:
        changes["allowed_scopes"] = _scopes(server, body.get(scope_key))
    if "is_official" in body:
        if not isinstance(body["is_official"], bool):
            raise InvalidClientMetadata("is_official must be true or false")
        changes["is_official"] = body["is_official"]
    return changes


async def list_clients(server: AuthorizationServer) -> list[dict[str, Any]]:
    async with server.db.connection() as conn:
        return [view(c) for c in await server.store.list_clients(conn)]


async def create_client(
    server: AuthorizationServer, call: Call, body: Mapping[str, Any], created_by: int | None
) -> dict[str, Any]:
    changes = _changes(server, body, creating=True)
    public = body.get("public", False)
    if not isinstance(public, bool):
        raise InvalidClientMetadata("public must be true or false")
    secret = None if public else random_id()
    async with server.db.connection() as conn:
        client = await server.store.insert_client(
            conn,
            client_id=short_id(),
            secret_hash=sha256_hex(secret) if secret else None,
            name=changes["name"],
            description=changes.get("description"),
            icon_url=changes.get("icon_url"),
            redirect_uris=changes["redirect_uris"],
            allowed_scopes=changes["allowed_scopes"],
            is_official=changes.get("is_official", False),
            created_by=created_by,
            now=server.now(),
        )
    await server.audit(
        audit.CLIENT_CREATED,
        call,
        client_id=client["client_id"],
        user_id=created_by,
        details={"public": public},
    )
    out = view(client)
    if secret:
        out["client_secret"] = secret
    return out


async def update_client(
    server: AuthorizationServer, call: Call, id_: int, body: Mapping[str, Any], actor: int | None
) -> dict[str, Any]:
    changes = _changes(server, body, creating=False)
    async with server.db.connection() as conn:
        client = await server.store.update_client(conn, id_, changes, server.now())
    if client is None:
        raise NotFound("no such active client")
    await server.audit(
        audit.CLIENT_UPDATED,
        call,
        client_id=client["client_id"],
        user_id=actor,
        details={"fields": sorted(changes)},
    )
    return view(client)


async def rotate_secret(
    server: AuthorizationServer, call: Call, id_: int, actor: int | None
) -> dict[str, Any]:
    secret = random_id()
    now = server.now()
    async with server.db.connection() as conn, transaction(conn):
        current = await server.store.get_client_by_id(conn, id_)
        if current is None or current["revoked_at"] is not None:
            raise NotFound("no such active client")
        if current["client_secret_hash"] is None:
            raise InvalidClientMetadata("a public client has no secret to rotate")
        client = await server.store.set_client_secret(conn, id_, sha256_hex(secret), now)
        assert client is not None
        revoked = await server.store.revoke_client_tokens(
            conn, client["client_id"], now, "secret_rotated"
        )
    await server.audit(
        audit.CLIENT_SECRET_ROTATED,
        call,
        client_id=client["client_id"],
        user_id=actor,
        details={"tokens_revoked": revoked},
    )
    return {**view(client), "client_secret": secret}


async def revoke_client(
    server: AuthorizationServer, call: Call, id_: int, actor: int | None
) -> dict[str, Any]:
    now = server.now()
    async with server.db.connection() as conn, transaction(conn):
        client = await server.store.revoke_client(conn, id_, now)
        if client is None:
            raise NotFound("no such active client")
        revoked = await server.store.revoke_client_tokens(
            conn, client["client_id"], now, "client_revoked"
        )
    await server.audit(
        audit.CLIENT_REVOKED,
        call,
        client_id=client["client_id"],
        user_id=actor,
        details={"tokens_revoked": revoked},
    )
    return view(client)
