"""People: claiming the site, the unattended owner, and managing users by rank."""

from __future__ import annotations

import logging
from typing import Any

import psycopg2.errors
from email_validator import EmailNotValidError, validate_email

from common.db import Conn
from common.ids import short_id
from common.passwords import hash_password
from content.auth import store as session_store
from content.auth.credentials import require
from content.auth.permissions import ROLES, outranks
from content.auth.principal import Actor, Principal
from content.auth.service import confirm_password
from content.context import Context
from content.errors import Conflict, Forbidden, NotFound, Problems
from content.http import Paging
from content.people import store
from content.people.store import Person, UserChanges
from content.settings import MIN_PASSWORD_LENGTH, Bootstrap
from content.writes import Write, write

log = logging.getLogger(__name__)

MAX_PASSWORD_LENGTH = 1024
MAX_NAME_LENGTH = 200


def clean_email(problems: Problems, value: Any, key: str = "email") -> str:
    if not isinstance(value, str) or not value.strip():
        problems.add(key, "is required")
        return ""
    try:
        return validate_email(value.strip(), check_deliverability=False).normalized
    except EmailNotValidError as exc:
        problems.add(key, f"is not a valid email address: {exc}")
        return ""


def clean_password(problems: Problems, value: Any, key: str = "password") -> str:
    if not isinstance(value, str) or not value:
        problems.add(key, "is required")
        return ""
    if len(value) < MIN_PASSWORD_LENGTH:
        problems.add(key, f"must be at least {MIN_PASSWORD_LENGTH} characters")
    elif len(value) > MAX_PASSWORD_LENGTH:
        problems.add(key, f"must be at most {MAX_PASSWORD_LENGTH} characters")
    return value


def clean_name(problems: Problems, value: Any, key: str = "name") -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        problems.add(key, "must be a string")
        return ""
    if len(value.strip()) > MAX_NAME_LENGTH:
        problems.add(key, f"must be at most {MAX_NAME_LENGTH} characters")
    return value.strip()


def clean_role(problems: Problems, value: Any, key: str = "role") -> str:
    if value not in ROLES:
        problems.add(key, f"must be one of {', '.join(ROLES)}")
        return ""
    return str(value)


def _email_taken() -> Conflict:
    return Conflict(
        "a user with this email already exists",
        details={"fields": [{"key": "email", "message": "is already in use"}]},
    )


async def _insert(tx: Write, **values: Any) -> Person:
    try:
        return await store.insert_user(tx.conn, user_id=short_id(), now=tx.now, **values)
    except psycopg2.errors.UniqueViolation:
        raise _email_taken() from None


async def setup_required(ctx: Context) -> bool:
    """Whether the site still waits for its first owner (no user yet)."""
    async with ctx.db.connection() as conn:
        return await store.count_users(conn) == 0


async def list_users(ctx: Context, paging: Paging) -> tuple[list[Person], int]:
    async with ctx.db.connection() as conn:
        return await store.list_users(conn, limit=paging.limit, offset=paging.offset)


async def claim_site(ctx: Context, body: dict[str, Any]) -> Person:
    """The first visit creates the first owner; refused once anyone exists."""
    problems = Problems()
    email = clean_email(problems, body.get("email"))
    password = clean_password(problems, body.get("password"))
    name = clean_name(problems, body.get("name"))
    problems.raise_if_any()
    async with ctx.db.connection() as conn:
        if await store.count_users(conn):
            raise Conflict("this site already has an owner; sign in instead", "SETUP_DONE")
    password_hash = await hash_password(password)
    async with write(ctx) as tx:
        await store.lock_people(tx.conn)
        if await store.count_users(tx.conn):
            raise Conflict("this site already has an owner; sign in instead", "SETUP_DONE")
        user = await _insert(tx, email=email, name=name, role="owner", password_hash=password_hash)
        owner = Actor(kind="user", user_id=user.id, name=user.name or email)
        await tx.record(owner, "user.setup", "user", user.id, {"role": "owner"})
    return user


async def bootstrap_owner(ctx: Context, bootstrap: Bootstrap) -> bool:
    """BOOTSTRAP_EMAIL/PASSWORD/NAME: create the first owner when nobody exists yet."""
    async with ctx.db.connection() as conn:
        if await store.count_users(conn):
            return False
    password_hash = await hash_password(bootstrap.password)
    async with write(ctx) as tx:
        await store.lock_people(tx.conn)
        if await store.count_users(tx.conn):
            return False
        user = await _insert(
            tx,
            email=bootstrap.email,
            name=bootstrap.name,
            role="owner",
            password_hash=password_hash,
        )
        system = Actor(kind="system", name="bootstrap")
        await tx.record(system, "user.bootstrap", "user", user.id, {"role": "owner"})
    log.info("created the first owner %s from BOOTSTRAP_EMAIL", bootstrap.email)
    return True


def _rank_refusal(message: str) -> Forbidden:
    return Forbidden(message, "RANK")


async def create_user(ctx: Context, actor: Principal, body: dict[str, Any]) -> Person:
    problems = Problems()
    email = clean_email(problems, body.get("email"))
    name = clean_name(problems, body.get("name"))
    role = clean_role(problems, body.get("role", "viewer"))
    password = clean_password(problems, body.get("password"))
    problems.raise_if_any()
    if outranks(actor.user.role, role):
        raise _rank_refusal(f"you cannot create a user above your own rank ({actor.user.role})")
    password_hash = await hash_password(password)
    async with write(ctx) as tx:
        user = await _insert(tx, email=email, name=name, role=role, password_hash=password_hash)
        summary = {"email": email, "role": role}
        await tx.record(actor.actor(), "user.created", "user", user.id, summary)
    return user


async def get_user(ctx: Context, user_id: str) -> Person:
    async with ctx.db.connection() as conn:
        user = await store.get_user(conn, user_id)
    if user is None:
        raise NotFound("no such user")
    return user


async def _ensure_not_last_owner(conn: Conn, target: Person, doing: str) -> None:
    if target.role == "owner" and await store.count_owners(conn) <= 1:
        raise Conflict(f"the last owner cannot be {doing}", "LAST_OWNER")


async def _locked_target(conn: Conn, actor: Principal, user_id: str, verb: str) -> Person:
    """The user ``actor`` may ``verb``, locked with the people table for this transaction."""
    await store.lock_people(conn)
    target = await store.get_user_for_update(conn, user_id)
    if target is None:
        raise NotFound("no such user")
    if outranks(actor.user.role, target.role):
        raise _rank_refusal(f"you cannot {verb} a user above your own rank")
    return target


# Roles that manage people: granting or taking one away changes who controls
# accounts, so it is as sensitive as a password (docs/content.md, "People").
MANAGING_ROLES = frozenset({"admin", "owner"})


def takeover_changes(target: Person, changes: UserChanges, *, new_password: bool) -> list[str]:
    """The fields of ``changes`` that amount to taking over an account.

    A new password or email moves who can sign in (a reset link goes to the
    email); a role into or out of admin/owner moves who manages people. Only
    real changes count, so a form sent back whole with the same email is not one.
    """
    fields = []
    if "email" in changes and changes["email"].lower() != target.email.lower():
        fields.append("email")
    if new_password:
        fields.append("password")
    role = changes.get("role", target.role)
    if role != target.role and MANAGING_ROLES & {role, target.role}:
        fields.append("role")
    return fields


async def update_user(ctx: Context, actor: Principal, user_id: str, body: dict[str, Any]) -> Person:
    problems = Problems()
    changes: UserChanges = {}
    if "email" in body:
        changes["email"] = clean_email(problems, body["email"])
    if "name" in body:
        changes["name"] = clean_name(problems, body["name"])
    if "role" in body:
        changes["role"] = clean_role(problems, body["role"])
    password = clean_password(problems, body["password"]) if "password" in body else None
    unknown = set(body) - {"email", "name", "role", "password", "currentPassword"}
    for key in sorted(unknown):
        problems.add(key, "is not a user field")
    problems.raise_if_any()
    if "role" in changes and outranks(actor.user.role, changes["role"]):
        raise _rank_refusal(f"you cannot promote anyone above your own rank ({actor.user.role})")
    # Person-only, re-asking the acting person's password: no key can take
    # over an account, whatever it was granted (issue 11).
    new_password = password is not None
    sensitive = takeover_changes(await get_user(ctx, user_id), changes, new_password=new_password)
    if sensitive:
        require(actor, "users.control")
        await confirm_password(ctx, actor.user.id, body.get("currentPassword"))
    if password is not None:
        changes["password_hash"] = await hash_password(password)
    async with write(ctx) as tx:
        conn, now = tx.conn, tx.now
        target = await _locked_target(conn, actor, user_id, "edit")
        if not set(takeover_changes(target, changes, new_password=new_password)) <= set(sensitive):
            # The person changed between the check and the lock (say, a new
            # role); what was confirmed is no longer what would be written.
            raise Conflict("this person changed while you were editing; try again")
        if changes.get("role", "owner") != "owner":
            await _ensure_not_last_owner(conn, target, "demoted")
        try:
            user = await store.update_user(conn, user_id, changes, now)
        except psycopg2.errors.UniqueViolation:
            raise _email_taken() from None
        assert user is not None
        if password is not None:
            # A new password ends every session of that account (agent keys
            # stay); changing your own keeps the session you did it from.
            keep = actor.session_id if user_id == actor.user.id else None
            await session_store.revoke_user_sessions(conn, user_id, now, keep=keep)
        summary: dict[str, Any] = {k: v for k, v in changes.items() if k != "password_hash"}
        if password is not None:
            summary["password"] = "changed"
        if "role" in changes:
            summary["previousRole"] = target.role
        await tx.record(actor.actor(), "user.updated", "user", user_id, summary)
    return user


async def delete_user(ctx: Context, actor: Principal, user_id: str) -> None:
    async with write(ctx) as tx:
        target = await _locked_target(tx.conn, actor, user_id, "delete")
        if target.role in MANAGING_ROLES:
            # Removing a person who manages people is not for a key, like
            # demoting one (a person needs no password: nothing is taken over).
            require(actor, "users.control")
        await _ensure_not_last_owner(tx.conn, target, "deleted")
        await store.delete_user(tx.conn, user_id)
        summary = {"email": target.email, "role": target.role}
        await tx.record(actor.actor(), "user.deleted", "user", user_id, summary)


async def update_self(ctx: Context, actor: Principal, body: dict[str, Any]) -> Person:
    """Your own name, email or password; email and password need the current password."""
    problems = Problems()
    changes: UserChanges = {}
    if "name" in body:
        changes["name"] = clean_name(problems, body["name"])
    if "email" in body:
        changes["email"] = clean_email(problems, body["email"])
    password = clean_password(problems, body["password"]) if "password" in body else None
    for key in sorted(set(body) - {"name", "email", "password", "currentPassword"}):
        problems.add(key, "cannot be changed here")
    problems.raise_if_any()
    if password is not None or "email" in changes:
        await confirm_password(ctx, actor.user.id, body.get("currentPassword"))
    if password is not None:
        changes["password_hash"] = await hash_password(password)
    async with write(ctx) as tx:
        conn, now = tx.conn, tx.now
        try:
            user = await store.update_user(conn, actor.user.id, changes, now)
        except psycopg2.errors.UniqueViolation:
            raise _email_taken() from None
        assert user is not None
        if password is not None:
            # Every other session ends; this one stays signed in.
            await session_store.revoke_user_sessions(
                conn, actor.user.id, now, keep=actor.session_id
            )
        summary: dict[str, Any] = {k: v for k, v in changes.items() if k != "password_hash"}
        if password is not None:
            summary["password"] = "changed"
        await tx.record(actor.actor(), "user.updated", "user", actor.user.id, summary)
    return user
