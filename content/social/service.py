"""Social publishing: network apps, connecting accounts, posts, and sending each target.

A post has one target per selected account; its status is the roll-up of
its targets (:func:`rollup`), never set directly. Sending runs each target
on the job queue (``SEND_JOB``), independently; a scheduled post is a
``DUE_JOB`` at its time that queues its targets.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from base64 import urlsafe_b64encode
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode, urlsplit

import aiohttp

from common import jobs
from common.crypto import Sealer, sha256_hex
from common.db import Conn, Json
from common.ids import short_id
from content.auth.principal import SYSTEM_ACTOR, Actor, Principal
from content.auth.store import session_user
from content.context import Context
from content.errors import BadRequest, Conflict, ContentError, NotFound, Problems
from content.media import store as media_store
from content.people import store as people_store
from content.settings import OAuthClientEnv
from content.social import store
from content.social.networks import (
    TIMEOUT,
    App,
    Attachment,
    Bluesky,
    Http,
    Mastodon,
    Network,
    Outgoing,
    Processing,
    Profile,
    Published,
    PublishError,
    Tokens,
)
from content.social.registry import NETWORKS
from content.social.rules import MediaInfo, check
from content.writes import Write, write

SEND_JOB = "content.social.send"
DUE_JOB = "content.social.due"
SEAL_PURPOSE = "content.social"
CALLBACK_PATH = "/social/oauth/callback"
STATE_LIFETIME = timedelta(minutes=10)
# Tries of a target before a transient failure is final (5 s, 10 s ... by common/jobs backoff).
MAX_ATTEMPTS = 6
# The network's Retry-After is honoured up to a day.
MAX_WAIT = 86400.0
BUSY = ("queued", "sending", "retrying", "processing")
SENDABLE = BUSY
ENDPOINT_NAMES = ("authorize", "token", "api")


def sealer(ctx: Context) -> Sealer:
    return Sealer(ctx.runtime.settings.secret, SEAL_PURPOSE)


def network_of(name: str) -> Network:
    network = NETWORKS.get(name)
    if network is None:
        raise NotFound(f"no network named {name}")
    return network


def callback_url(ctx: Context) -> str:
    return ctx.runtime.settings.public_url.rstrip("/") + CALLBACK_PATH


def rollup(targets: Sequence[dict[str, Any]], scheduled_at: datetime | None) -> str:
    """draft, scheduled, publishing, published, partial or failed."""
    states = [t["status"] for t in targets]
    if not states or all(s == "pending" for s in states):
        return "scheduled" if scheduled_at is not None else "draft"
    if any(s in BUSY for s in states):
        return "publishing"
    posted = states.count("posted")
    if posted == len(states):
        return "published"
    return "partial" if posted else "failed"


# --- network apps ---------------------------------------------------------------


def _env(ctx: Context, network: str) -> OAuthClientEnv | None:
    if not NETWORKS[network].env_fallback:
        return None
    return ctx.config.social_oauth.get(network)


def app_of(ctx: Context, network: Network, row: dict[str, Any] | None) -> App | None:
    """The app credentials in use: the stored row, else SOCIAL_OAUTH_<NETWORK>_*.

    The API base comes from the row's override, else SOCIAL_<NETWORK>_API_URL,
    else the network's own address.
    """
    api = ctx.config.social_api.get(network.key)
    env_api = {"api": api} if api else {}
    if row is not None:
        if not row["enabled"]:
            return None
        secret = sealer(ctx).open(row["secret_sealed"]) if row["secret_sealed"] else ""
        return App(row["client_id"], secret, {**env_api, **row["endpoints"]})
    env = _env(ctx, network.key)
    if env is None or not env.client_id:
        return None if network.connect == "oauth" else App(endpoints=env_api)
    endpoints = {"authorize": env.authorize_url, "token": env.token_url}
    endpoints = {k: v for k, v in endpoints.items() if v} | env_api
    return App(env.client_id, env.client_secret, endpoints, env.scopes)


async def get_settings(ctx: Context) -> list[dict[str, Any]]:
    async with ctx.db.connection() as conn:
        rows = await store.apps(conn)
    out = []
    for network in NETWORKS.values():
        row = rows.get(network.key)
        env = _env(ctx, network.key)
        if row is not None:
            source = "settings"
        elif env is not None and env.client_id:
            source = "environment"
        else:
            source = "none" if network.connect == "oauth" else "not needed"
        out.append(
            {
                "network": network.key,
                "label": network.label,
                "connect": network.connect,
                "supported": network.supported,
                "source": source,
                "envFallback": network.env_fallback,
                "clientId": row["client_id"] if row else (env.client_id if env else ""),
                "secret": f"…{row['secret_last4']}" if row and row["secret_sealed"] else None,
                "enabled": row["enabled"] if row else source != "none",
                "endpoints": row["endpoints"] if row else {},
                "callbackUrl": callback_url(ctx),
                "walkthrough": list(network.guide),
            }
        )
    return out


def _url(value: Any, key: str, problems: Problems) -> str | None:
    if not isinstance(value, str) or not value:
        problems.add(key, "must be an http or https URL")
        return None
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        problems.add(key, "must be an http or https URL")
        return None
    return value


async def put_settings(ctx: Context, principal: Principal, name: str, body: dict[str, Any]) -> None:
    network = network_of(name)
    problems = Problems()
    client_id = body.get("clientId")
    if client_id is not None and (not isinstance(client_id, str) or len(client_id) > 500):
        problems.add("clientId", "must be a string of at most 500 characters")
    secret = body.get("clientSecret")
    if "clientSecret" in body and (not isinstance(secret, str) or len(secret) > 2000):
        problems.add("clientSecret", "must be a string of at most 2000 characters")
    enabled = body.get("enabled")
    if enabled is not None and not isinstance(enabled, bool):
        problems.add("enabled", "must be true or false")
    endpoints = body.get("endpoints")
    clean: dict[str, str] | None = None
    if endpoints is not None:
        if not isinstance(endpoints, dict):
            problems.add("endpoints", "must be an object")
        else:
            clean = {}
            for key, value in endpoints.items():
                if key not in ENDPOINT_NAMES:
                    problems.add(f"endpoints.{key}", f"one of {', '.join(ENDPOINT_NAMES)}")
                elif value not in (None, ""):
                    url = _url(value, f"endpoints.{key}", problems)
                    if url:
                        clean[key] = url
    problems.raise_if_any()
    async with write(ctx) as tx:
        row = await store.get_app(tx.conn, network.key) or {
            "client_id": "",
            "secret_sealed": None,
            "secret_last4": "",
            "enabled": True,
            "endpoints": {},
        }
        values = dict(row)
        if isinstance(client_id, str):
            values["client_id"] = client_id.strip()
        if isinstance(secret, str):
            # Absent keeps the stored secret; an empty string clears it (spec).
            values["secret_sealed"] = sealer(ctx).seal(secret) if secret else None
            values["secret_last4"] = secret[-4:] if secret else ""
        if isinstance(enabled, bool):
            values["enabled"] = enabled
        if clean is not None:
            values["endpoints"] = clean
        await store.put_app(tx.conn, network.key, values, tx.now)
        summary = {"network": network.key, "secretChanged": "clientSecret" in body}
        await tx.record(principal.actor(), "social.app.updated", "social_app", network.key, summary)


async def delete_settings(ctx: Context, principal: Principal, name: str) -> None:
    network = network_of(name)
    async with write(ctx) as tx:
        if not await store.delete_app(tx.conn, network.key):
            raise NotFound(f"no app is stored for {network.key}")
        await tx.record(principal.actor(), "social.app.deleted", "social_app", network.key)


# --- accounts -----------------------------------------------------------------------


def account_json(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"],
        "network": row["network"],
        "handle": row["handle"],
        "name": row["name"],
        "baseUrl": row["base_url"] or None,
        "needsAttention": row["attention"] is not None,
        "attention": row["attention"],
        "attentionSince": row["attention_at"],
        "tokenExpiresAt": row["expires_at"],
        "connectedAt": row["created_at"],
    }


async def list_accounts(ctx: Context) -> list[dict[str, Any]]:
    async with ctx.db.connection() as conn:
        rows = await store.accounts(conn)
        apps = await store.apps(conn)
    out = []
    for network in NETWORKS.values():
        app = app_of(ctx, network, apps.get(network.key))
        out.append(
            {
                "network": network.key,
                "label": network.label,
                "connect": network.connect,
                "supported": network.supported,
                "hasApp": app is not None and (network.connect != "oauth" or bool(app.client_id)),
                "accounts": [account_json(r) for r in rows if r["network"] == network.key],
            }
        )
    return out


def _return_to(ctx: Context, value: Any) -> str:
    default = f"{ctx.prefix}/admin/social"
    if value is None:
        return default
    # Only a path of this site: never an open redirect.
    ok = isinstance(value, str) and value.startswith("/") and not value.startswith("//")
    if not ok or "\\" in value or len(value) > 500:
        problems = Problems()
        problems.add("returnTo", "a path on this site, for example /admin/social")
        problems.raise_if_any()
    return str(value)


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
    return verifier, challenge.decode()


async def start(
    ctx: Context, principal: Principal, name: str, body: dict[str, Any]
) -> dict[str, Any]:
    """A consent URL bound to this session, or (app passwords) the connected account."""
    network = network_of(name)
    if not network.supported:
        raise BadRequest(
            f"connecting {network.label} accounts is not available yet", "SOCIAL_UNSUPPORTED"
        )
    async with ctx.db.connection() as conn:
        row = await store.get_app(conn, network.key)
    app = app_of(ctx, network, row)
    if app is None or (network.connect == "oauth" and not app.client_id):
        raise BadRequest(
            f"register a {network.label} app first (PUT /api/social/settings/{network.key})",
            "SOCIAL_NO_APP",
        )
    if isinstance(network, Bluesky):
        return {"url": None, "account": await _connect_bluesky(ctx, principal, network, app, body)}
    return_to = _return_to(ctx, body.get("returnTo"))
    base = ""
    if isinstance(network, Mastodon):
        problems = Problems()
        base = (_url(body.get("instance"), "instance", problems) or "").rstrip("/")
        problems.raise_if_any()
        app = await _instance_app(ctx, network, base)
    state = secrets.token_urlsafe(32)
    verifier, challenge = _pkce()
    assert principal.session_id is not None  # social routes take sessions only
    async with ctx.db.connection() as conn:
        await store.add_state(
            conn,
            {
                "state_hash": sha256_hex(state),
                "network": network.key,
                "session_id": principal.session_id,
                "user_id": principal.user.id,
                "verifier_sealed": sealer(ctx).seal(verifier),
                "instance": base,
                "return_to": return_to,
                "expires_at": ctx.clock.now() + STATE_LIFETIME,
            },
        )
    url = network.authorize_url(
        app, state=state, challenge=challenge, redirect_uri=callback_url(ctx), base=base
    )
    return {"url": url, "account": None}


async def _instance_app(ctx: Context, network: Mastodon, base: str) -> App:
    async with ctx.db.connection() as conn:
        found = await store.instance(conn, network.key, base)
    if found is not None:
        return App(found["client_id"], sealer(ctx).open(found["secret_sealed"]))
    async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
        try:
            app = await network.register(
                Http(session, ctx.clock.now()),
                base,
                callback_url(ctx),
                ctx.runtime.settings.public_url,
            )
        except PublishError as exc:
            raise ContentError(502, "SOCIAL_NETWORK_ERROR", exc.message) from exc
    async with ctx.db.connection() as conn:
        await store.add_instance(
            conn,
            network.key,
            base,
            app.client_id,
            sealer(ctx).seal(app.client_secret),
            ctx.clock.now(),
        )
        found = await store.instance(conn, network.key, base)
    assert found is not None  # a concurrent first registration won: use its app
    return App(found["client_id"], sealer(ctx).open(found["secret_sealed"]))


async def _connect_bluesky(
    ctx: Context, principal: Principal, network: Bluesky, app: App, body: dict[str, Any]
) -> dict[str, Any]:
    problems = Problems()
    identifier, password = body.get("identifier"), body.get("password")
    if not isinstance(identifier, str) or not identifier.strip() or len(identifier) > 300:
        problems.add("identifier", "your Bluesky handle or email")
    if not isinstance(password, str) or not password or len(password) > 300:
        problems.add("password", "an app password (Settings, App passwords)")
    base = network.endpoint(app, "api")
    if body.get("service") is not None:
        base = (_url(body.get("service"), "service", problems) or base).rstrip("/")
    problems.raise_if_any()
    assert isinstance(identifier, str) and isinstance(password, str)
    async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
        try:
            tokens, profile = await network.login(
                Http(session, ctx.clock.now()), base, identifier.strip(), password
            )
        except PublishError as exc:
            raise ContentError(400, "SOCIAL_CONNECT_FAILED", exc.message) from exc
    return await _save_account(ctx, principal.actor(), network, tokens, profile, principal.user.id)


async def _save_account(
    ctx: Context, actor: Actor, network: Network, tokens: Tokens, profile: Profile, user_id: str
) -> dict[str, Any]:
    async with write(ctx) as tx:
        row = await store.save_account(
            tx.conn,
            {
                "id": f"sa_{short_id(12)}",
                "network": network.key,
                "remote_id": profile.remote_id,
                "handle": profile.handle,
                "name": profile.name,
                "base_url": profile.base_url,
                "options": dict(profile.options),
                "tokens_sealed": sealer(ctx).seal(tokens.as_json()),
                "expires_at": tokens.expires_at,
                "connected_by": user_id,
            },
            tx.now,
        )
        await tx.record(
            actor,
            "social.account.connected",
            "social_account",
            row["id"],
            {"network": network.key, "handle": row["handle"]},
            notify={"socialAccount": row["id"]},
        )
    return account_json(row)


class CallbackRefused(Exception):
    """The callback cannot go on: forged, replayed or expired state, or another session."""


async def callback(ctx: Context, query: dict[str, str], cookie: str | None) -> str:
    """Finish a consent; the address to send the browser back to (with the outcome)."""
    state = query.get("state", "")
    now = ctx.clock.now()
    async with ctx.db.connection() as conn:
        pending = await store.take_state(conn, sha256_hex(state), now) if state else None
        if pending is None or not await store.session_live(conn, pending["session_id"], now):
            raise CallbackRefused("this sign-in link is unknown, used or expired; start again")
        if cookie:
            holder = await session_user(conn, sha256_hex(cookie), now)
            if holder is None or holder.session_id != pending["session_id"]:
                raise CallbackRefused("this consent was started by another session")
    network = NETWORKS[pending["network"]]
    back = pending["return_to"]
    sep = "&" if "?" in back else "?"
    if "error" in query or not query.get("code"):
        reason = query.get("error_description") or query.get("error") or "no code returned"
        return (
            back
            + sep
            + urlencode({"social": "error", "network": network.key, "reason": reason[:300]})
        )
    base = pending["instance"]
    async with ctx.db.connection() as conn:
        row = await store.get_app(conn, network.key)
    app = (
        await _instance_app(ctx, network, base)
        if isinstance(network, Mastodon)
        else app_of(ctx, network, row)
    )
    if app is None:
        return (
            back
            + sep
            + urlencode(
                {"social": "error", "network": network.key, "reason": "the app was removed"}
            )
        )
    async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
        try:
            connected = await network.exchange(
                Http(session, now, network.classify),
                app,
                code=query["code"],
                verifier=sealer(ctx).open(pending["verifier_sealed"]),
                redirect_uri=callback_url(ctx),
                base=base,
            )
        except PublishError as exc:
            return (
                back
                + sep
                + urlencode(
                    {"social": "error", "network": network.key, "reason": exc.message[:300]}
                )
            )
    async with ctx.db.connection() as conn:
        user = await people_store.get_user(conn, pending["user_id"])
    name = (user.name or user.email) if user is not None else ""
    actor = Actor(kind="user", name=name, user_id=pending["user_id"])
    ids = [
        (await _save_account(ctx, actor, network, tokens, profile, pending["user_id"]))["id"]
        for tokens, profile in connected
    ]
    if not ids:
        reason = "the consent named no account this CMS can post as"
        return back + sep + urlencode({"social": "error", "network": network.key, "reason": reason})
    return back + sep + urlencode({"social": "connected", "account": ",".join(ids)})


async def disconnect(ctx: Context, principal: Principal, account_id: str) -> None:
    async with write(ctx) as tx:
        unsent = await store.unsent_targets_of_account(tx.conn, account_id)
        row = await store.delete_account(tx.conn, account_id)
        if row is None:
            raise NotFound("no such account")
        for target in unsent:
            if target["job_key"]:
                await jobs.cancel(tx.conn, target["job_key"])
            await store.delete_target(tx.conn, target["id"])
        for post_id in {t["post_id"] for t in unsent}:
            await _rollup(tx, post_id)
        await tx.record(
            principal.actor(),
            "social.account.disconnected",
            "social_account",
            account_id,
            {"network": row["network"], "handle": row["handle"]},
            notify={"socialAccount": account_id},
        )


# --- posts ------------------------------------------------------------------------------


def target_json(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"],
        "accountId": row["account_id"],
        "network": row["network"],
        "handle": row["handle"],
        "status": row["status"],
        "errorKind": row["error_kind"],
        "error": row["error"],
        "attempts": row["attempts"],
        "nextAttemptAt": row["next_attempt_at"],
        "remoteId": row["remote_id"],
        "url": row["remote_url"],
        "postedAt": row["posted_at"],
    }


def post_json(row: dict[str, Any], targets: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": row["id"],
        "text": row["text"],
        "link": row["link"],
        "media": list(row["media"]),
        "status": row["status"],
        "scheduledAt": row["scheduled_at"],
        "sentAt": row["sent_at"],
        "authorId": row["author_id"],
        "createdAt": row["created_at"],
        "updatedAt": row["updated_at"],
        "targets": [target_json(t) for t in targets],
    }


async def posts_json(conn: Conn, rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    targets = await store.targets(conn, [r["id"] for r in rows])
    return [post_json(r, targets[r["id"]]) for r in rows]


async def get_post(ctx: Context, post_id: str) -> dict[str, Any]:
    async with ctx.db.connection() as conn:
        row = await store.post(conn, post_id)
        if row is None:
            raise NotFound("no such social post")
        return (await posts_json(conn, [row]))[0]


def _copy(body: dict[str, Any], problems: Problems, *, partial: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "text" in body or not partial:
        text = body.get("text", "")
        if not isinstance(text, str) or len(text) > 70000:
            problems.add("text", "must be a string of at most 70000 characters")
        else:
            out["text"] = text.strip()
    if "link" in body:
        link = body["link"]
        out["link"] = None if link in (None, "") else _url(link, "link", problems)
    if "media" in body or not partial:
        media = body.get("media", [])
        if (
            not isinstance(media, list)
            or len(media) > 20
            or not all(isinstance(m, str) for m in media)
        ):
            problems.add("media", "a list of at most 20 media ids")
        else:
            out["media"] = media
    if "accounts" in body:
        accounts = body["accounts"]
        if not isinstance(accounts, list) or not all(isinstance(a, str) for a in accounts):
            problems.add("accounts", "a list of account ids")
        else:
            out["accounts"] = list(dict.fromkeys(accounts))
    return out


async def _check_copy(
    conn: Conn,
    text: str,
    link: str | None,
    media: list[str],
    accounts: Sequence[dict[str, Any]],
    problems: Problems,
) -> None:
    """The copy against the media library and every selected network's rules (SOCIAL_INVALID)."""
    found = await media_store.media_by_ids(conn, media)
    for i, media_id in enumerate(media):
        if media_id not in found:
            problems.add(f"media.{i}", "no such media")
    if problems:
        problems.raise_if_any()
    if not text and not media:
        problems.add("text", "write something or attach media")
        problems.raise_if_any()
    infos = [MediaInfo(m, found[m].type, found[m].size) for m in media]
    social = Problems()
    for network in sorted({a["network"] for a in accounts}):
        for problem in check(network, text, link, infos):
            social.add(problem.key, problem.message)
    if social:
        raise ContentError(
            400,
            "SOCIAL_INVALID",
            social.fields[0].key + ": " + social.fields[0].message,
            {"fields": [{"key": f.key, "message": f.message} for f in social.fields]},
        )


async def _accounts(conn: Conn, ids: list[str] | None, problems: Problems) -> list[dict[str, Any]]:
    rows = await store.accounts(conn)
    if ids is None:
        return rows
    by_id = {r["id"]: r for r in rows}
    for i, account_id in enumerate(ids):
        if account_id not in by_id:
            problems.add(f"accounts.{i}", "no such connected account")
    return [by_id[a] for a in ids if a in by_id]


async def check_post(ctx: Context, body: dict[str, Any]) -> dict[str, Any]:
    """What create_post checks, writing nothing: the cleaned copy and the account
    ids it would target (the assistant's proposals check a post before review)."""
    problems = Problems()
    copy = _copy(body, problems, partial=False)
    problems.raise_if_any()
    async with ctx.db.connection() as conn:
        accounts = await _accounts(conn, copy.get("accounts"), problems)
        problems.raise_if_any()
        await _check_copy(conn, copy["text"], copy.get("link"), copy["media"], accounts, problems)
    return {**copy, "accounts": [a["id"] for a in accounts]}


async def create_post(ctx: Context, principal: Principal, body: dict[str, Any]) -> dict[str, Any]:
    problems = Problems()
    copy = _copy(body, problems, partial=False)
    problems.raise_if_any()
    post_id = f"sp_{short_id(12)}"
    async with write(ctx) as tx:
        accounts = await _accounts(tx.conn, copy.get("accounts"), problems)
        problems.raise_if_any()
        await _check_copy(
            tx.conn, copy["text"], copy.get("link"), copy["media"], accounts, problems
        )
        await store.insert_post(
            tx.conn,
            {
                "id": post_id,
                "text": copy["text"],
                "link": copy.get("link"),
                "media": copy["media"],
                "author_id": principal.user.id,
            },
            tx.now,
        )
        for account in accounts:
            await _add_target(tx, post_id, account, copy)
        await tx.record(
            principal.actor(),
            "social.post.created",
            "social_post",
            post_id,
            {"accounts": len(accounts)},
            notify={"socialPost": post_id, "status": "draft"},
        )
    return await get_post(ctx, post_id)


async def _add_target(
    tx: Write, post_id: str, account: dict[str, Any], copy: dict[str, Any]
) -> None:
    await store.insert_target(
        tx.conn,
        {
            "id": f"st_{short_id(12)}",
            "post_id": post_id,
            "account_id": account["id"],
            "network": account["network"],
            "handle": account["handle"],
            "text": copy["text"],
            "link": copy.get("link"),
            "media": copy["media"],
            "idempotency_key": secrets.token_hex(16),
        },
        tx.now,
    )


async def _locked_post(tx: Write, post_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    row = await store.post(tx.conn, post_id, lock=True)
    if row is None:
        raise NotFound("no such social post")
    return row, (await store.targets(tx.conn, [post_id]))[post_id]


async def update_post(
    ctx: Context, principal: Principal, post_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    problems = Problems()
    changes = _copy(body, problems, partial=True)
    problems.raise_if_any()
    async with write(ctx) as tx:
        row, targets = await _locked_post(tx, post_id)
        if any(t["status"] in ("queued", "sending") for t in targets):
            raise Conflict("the post is being sent; edit it once it is done", "SOCIAL_BUSY")
        copy = {
            "text": changes.get("text", row["text"]),
            "link": changes["link"] if "link" in changes else row["link"],
            "media": changes.get("media", list(row["media"])),
        }
        current = {t["account_id"]: t for t in targets if t["account_id"]}
        wanted_ids = changes.get("accounts", list(current))
        accounts = await _accounts(tx.conn, wanted_ids, problems)
        problems.raise_if_any()
        # A target already posted keeps its copy and link: only the others are checked.
        open_accounts = [a for a in accounts if current.get(a["id"], {}).get("status") != "posted"]
        await _check_copy(
            tx.conn, copy["text"], copy["link"], copy["media"], open_accounts, problems
        )
        await store.update_post(tx.conn, post_id, copy, tx.now)
        wanted = {a["id"] for a in accounts}
        for target in targets:
            if target["status"] == "posted":
                continue
            if target["account_id"] not in wanted:
                if target["job_key"]:
                    await jobs.cancel(tx.conn, target["job_key"])
                await store.delete_target(tx.conn, target["id"])
            else:
                await store.update_target(tx.conn, target["id"], copy, tx.now)
        for account in accounts:
            if account["id"] not in current:
                await _add_target(tx, post_id, account, copy)
        status = await _rollup(tx, post_id)
        await tx.record(
            principal.actor(),
            "social.post.updated",
            "social_post",
            post_id,
            notify={"socialPost": post_id, "status": status},
        )
    return await get_post(ctx, post_id)


async def delete_post(ctx: Context, principal: Principal, post_id: str) -> None:
    async with write(ctx) as tx:
        row, targets = await _locked_post(tx, post_id)
        for target in targets:
            if target["job_key"] and target["status"] != "posted":
                await jobs.cancel(tx.conn, target["job_key"])
        if row["scheduled_at"] is not None:
            await jobs.cancel(tx.conn, _due_key(post_id, row["scheduled_at"]))
        await store.update_post(tx.conn, post_id, {"deleted_at": tx.now}, tx.now)
        await tx.record(
            principal.actor(),
            "social.post.deleted",
            "social_post",
            post_id,
            notify={"socialPost": post_id, "status": "deleted"},
        )


def _due_key(post_id: str, at: datetime) -> str:
    return f"{DUE_JOB}:{post_id}:{at.isoformat()}"


def parse_moment(value: Any, key: str) -> datetime:
    problems = Problems()
    try:
        moment = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        problems.add(key, "an ISO 8601 time with its offset, for example 2030-01-01T09:00:00Z")
        problems.raise_if_any()
    assert moment is not None
    return moment


async def schedule_post(
    ctx: Context, principal: Principal, post_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    at = parse_moment(body.get("at"), "at")
    async with write(ctx) as tx:
        row, targets = await _locked_post(tx, post_id)
        if at <= tx.now:
            problems = Problems()
            problems.add("at", "must be in the future")
            problems.raise_if_any()
        if row["status"] not in ("draft", "scheduled"):
            raise Conflict(f"a {row['status']} post cannot be scheduled", "SOCIAL_STATE")
        if not targets:
            raise BadRequest("select at least one account first", "SOCIAL_NO_TARGETS")
        if row["scheduled_at"] is not None:
            await jobs.cancel(tx.conn, _due_key(post_id, row["scheduled_at"]))
        await store.update_post(tx.conn, post_id, {"scheduled_at": at}, tx.now)
        await jobs.enqueue(
            tx.conn,
            DUE_JOB,
            {"post": post_id, "at": at.isoformat()},
            run_at=at,
            key=_due_key(post_id, at),
        )
        await _rollup(tx, post_id)
        await tx.record(
            principal.actor(),
            "social.post.scheduled",
            "social_post",
            post_id,
            {"at": at.isoformat()},
            notify={"socialPost": post_id, "status": "scheduled"},
        )
    return await get_post(ctx, post_id)


async def cancel_post(ctx: Context, principal: Principal, post_id: str) -> dict[str, Any]:
    async with write(ctx) as tx:
        row, _ = await _locked_post(tx, post_id)
        if row["status"] != "scheduled":
            raise Conflict("only a scheduled post can be cancelled", "SOCIAL_STATE")
        await jobs.cancel(tx.conn, _due_key(post_id, row["scheduled_at"]))
        await store.update_post(tx.conn, post_id, {"scheduled_at": None}, tx.now)
        await _rollup(tx, post_id)
        await tx.record(
            principal.actor(),
            "social.post.cancelled",
            "social_post",
            post_id,
            notify={"socialPost": post_id, "status": "draft"},
        )
    return await get_post(ctx, post_id)


async def publish_post(ctx: Context, principal: Principal, post_id: str) -> dict[str, Any]:
    async with write(ctx) as tx:
        await _queue(tx, post_id, principal.actor())
    return await get_post(ctx, post_id)


async def _queue(tx: Write, post_id: str, actor: Actor) -> str:
    """Queue every target not yet posted, now: a manual publish overrides any backoff."""
    row, targets = await _locked_post(tx, post_id)
    if not targets:
        raise BadRequest("select at least one account first", "SOCIAL_NO_TARGETS")
    if row["scheduled_at"] is not None:
        await jobs.cancel(tx.conn, _due_key(post_id, row["scheduled_at"]))
    await store.update_post(tx.conn, post_id, {"scheduled_at": None}, tx.now)
    queued = 0
    for target in targets:
        # Posted targets are never sent twice; one being sent right now is left to finish.
        if target["status"] in ("posted", "sending", "processing"):
            continue
        if target["job_key"]:
            await jobs.cancel(tx.conn, target["job_key"])
        key = f"{SEND_JOB}:{target['id']}:{short_id(8)}"
        await jobs.enqueue(tx.conn, SEND_JOB, {"target": target["id"]}, run_at=tx.now, key=key)
        await store.update_target(
            tx.conn,
            target["id"],
            {"status": "queued", "job_key": key, "next_attempt_at": tx.now},
            tx.now,
        )
        queued += 1
    status = await _rollup(tx, post_id)
    await tx.record(
        actor,
        "social.post.published",
        "social_post",
        post_id,
        {"queued": queued},
        notify={"socialPost": post_id, "status": status},
    )
    return status


async def _rollup(tx: Write, post_id: str) -> str:
    row = await store.post(tx.conn, post_id)
    if row is None:
        return "deleted"
    targets = (await store.targets(tx.conn, [post_id]))[post_id]
    status = rollup(targets, row["scheduled_at"])
    values: dict[str, Any] = {"status": status}
    posted = [t["posted_at"] for t in targets if t["posted_at"] is not None]
    values["sent_at"] = max(posted) if posted else None
    await store.update_post(tx.conn, post_id, values, tx.now)
    return status


async def list_posts(
    ctx: Context, status: str | None, limit: int, offset: int
) -> tuple[list[dict[str, Any]], int]:
    async with ctx.db.connection() as conn:
        rows, total = await store.list_posts(conn, status, limit, offset)
        return await posts_json(conn, rows), total


async def calendar(ctx: Context, start: datetime, days: int) -> list[dict[str, Any]]:
    async with ctx.db.connection() as conn:
        rows = await store.in_window(conn, start, start + timedelta(days=days))
        return await posts_json(conn, rows)


async def overview(ctx: Context) -> dict[str, Any]:
    async with ctx.db.connection() as conn:
        found = await store.overview(conn, ctx.clock.now())
        accounts = await store.accounts(conn)
    counts = {s: 0 for s in ("draft", "scheduled", "publishing", "published", "partial", "failed")}
    counts.update(found["counts"])
    nxt, last = found["next"], found["last"]
    return {
        "counts": counts,
        "next": {"id": nxt["id"], "at": nxt["scheduled_at"]} if nxt else None,
        "last": {"id": last["id"], "at": last["sent_at"]} if last else None,
        "attention": [account_json(a) for a in accounts if a["attention"] is not None],
    }


async def networks(ctx: Context) -> list[dict[str, Any]]:
    async with ctx.db.connection() as conn:
        accounts = await store.accounts(conn)
    return [
        {
            "network": n.key,
            "label": n.label,
            "connect": n.connect,
            "supported": n.supported,
            "rules": n.rules.as_json(),
            "accounts": [
                {"id": a["id"], "handle": a["handle"], "needsAttention": a["attention"] is not None}
                for a in accounts
                if a["network"] == n.key
            ],
        }
        for n in NETWORKS.values()
    ]


# --- the jobs -------------------------------------------------------------------------------


def due_handler(ctx: Context) -> jobs.Handler:
    async def run(job: jobs.Job) -> None:
        post_id, at = job.payload["post"], job.payload["at"]
        async with write(ctx) as tx:
            row = await store.post(tx.conn, post_id, lock=True)
            # Cancelled, rescheduled or deleted since: this job is stale.
            if row is None or row["scheduled_at"] is None or row["scheduled_at"].isoformat() != at:
                return
            await _queue(tx, post_id, SYSTEM_ACTOR)

    return run


def send_handler(ctx: Context) -> jobs.Handler:
    async def run(job: jobs.Job) -> None:
        await send_target(ctx, job.payload["target"], job.key)

    return run


async def _attachments(ctx: Context, conn: Conn, ids: Sequence[str]) -> list[Attachment]:
    found = await media_store.media_by_ids(conn, ids)
    out = []
    for media_id in ids:
        item = found.get(media_id)
        if item is None:
            raise PublishError("content", f"media {media_id} was deleted from the library")
        data = await ctx.blobs.get(item.sha256)
        public = (
            ctx.runtime.settings.public_url.rstrip("/") + item.url
            if item.url.startswith("/")
            else item.url
        )
        out.append(Attachment(item.type, item.filename, data, item.alt, public))
    return out


async def send_target(ctx: Context, target_id: str, job_key: str | None) -> None:
    now = ctx.clock.now()
    async with write(ctx) as tx:
        target = await store.target(tx.conn, target_id, lock=True)
        if target is None or target["job_key"] != job_key or target["status"] not in SENDABLE:
            return  # superseded by a later publish, posted, or removed
        if target["status"] == "sending" and target["network"] != "mastodon":
            # A worker died mid-send: without an idempotency key a second send could
            # post twice, so the admin decides (publish again) after checking the network.
            interrupted = "the send was interrupted; check the network, then publish again"
            await _outcome(tx, target, PublishError("retry", interrupted), final=True)
            return
        resuming = target["status"] == "processing"
        if not resuming:
            await store.update_target(
                tx.conn,
                target_id,
                {"status": "sending", "attempts": target["attempts"] + 1},
                tx.now,
            )
            target = {**target, "attempts": target["attempts"] + 1}
        account = (
            await store.account(tx.conn, target["account_id"]) if target["account_id"] else None
        )
        app_row = await store.get_app(tx.conn, target["network"])
    if account is None:
        result: Published | Processing | PublishError = PublishError(
            "reconnect", "the account was disconnected"
        )
        refreshed = None
    else:
        result, refreshed = await _attempt(ctx, target, account, app_row, now)
    async with write(ctx) as tx:
        if refreshed is not None and account is not None:
            sealed = sealer(ctx).seal(refreshed.as_json())
            await store.set_tokens(tx.conn, account["id"], sealed, refreshed.expires_at, tx.now)
        current = await store.target(tx.conn, target_id, lock=True)
        if current is None or current["job_key"] != job_key:
            return
        if isinstance(result, Published):
            values = {
                "status": "posted",
                "remote_id": result.remote_id,
                "remote_url": result.url,
                "posted_at": tx.now,
                "error": None,
                "error_kind": None,
                "next_attempt_at": None,
                "processing": None,
            }
            await store.update_target(tx.conn, target_id, values, tx.now)
            await _finish(tx, target, "social.post.sent")
        elif isinstance(result, Processing):
            at = tx.now + timedelta(seconds=result.after)
            key = f"{SEND_JOB}:{target_id}:{short_id(8)}"
            await jobs.enqueue(tx.conn, SEND_JOB, {"target": target_id}, run_at=at, key=key)
            values = {
                "status": "processing",
                "processing": Json(result.state),
                "next_attempt_at": at,
                "job_key": key,
            }
            await store.update_target(tx.conn, target_id, values, tx.now)
            await _finish(tx, target, "social.post.processing")
        else:
            await _outcome(tx, {**current, "attempts": target["attempts"]}, result, final=False)


async def _attempt(
    ctx: Context,
    target: dict[str, Any],
    account: dict[str, Any],
    app_row: dict[str, Any] | None,
    now: datetime,
) -> tuple[Published | Processing | PublishError, Tokens | None]:
    """One try at the network: publish (or resume), refreshing an expired token once."""
    network = NETWORKS[target["network"]]
    app = App() if isinstance(network, Mastodon) else (app_of(ctx, network, app_row) or App())
    raw = json.loads(sealer(ctx).open(account["tokens_sealed"]))
    tokens = Tokens(raw["access"], raw.get("refresh", ""), account["expires_at"])
    profile = Profile(
        account["remote_id"],
        account["handle"],
        account["name"],
        account["base_url"],
        account["options"],
    )
    refreshed: Tokens | None = None
    async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
        http = Http(session, now, network.classify)

        async def once(current: Tokens) -> Published:
            if target["status"] == "processing":
                return await network.resume(http, app, profile, current, target["processing"])
            async with ctx.db.connection() as conn:
                media = await _attachments(ctx, conn, target["media"])
            outgoing = Outgoing(target["text"], target["link"], media, target["idempotency_key"])
            return await network.publish(http, app, profile, current, outgoing)

        try:
            if tokens.expires_at is not None and tokens.expires_at <= now + timedelta(minutes=1):
                refreshed = await _refresh(network, http, app, tokens, account["base_url"])
                tokens = refreshed or tokens
            try:
                return await once(tokens), refreshed
            except PublishError as exc:
                if exc.kind != "reconnect" or refreshed is not None:
                    raise
                # An expired or revoked token: refresh once, then try again.
                refreshed = await _refresh(network, http, app, tokens, account["base_url"])
                if refreshed is None:
                    raise
                return await once(refreshed), refreshed
        except (PublishError, Processing) as exc:
            return exc, refreshed


async def _refresh(
    network: Network, http: Http, app: App, tokens: Tokens, base: str
) -> Tokens | None:
    try:
        return await network.refresh(http, app, tokens, base)
    except PublishError as exc:
        if exc.kind == "retry":
            raise
        return None


async def _outcome(tx: Write, target: dict[str, Any], error: PublishError, *, final: bool) -> None:
    values: dict[str, Any] = {"error": error.message, "error_kind": error.kind}
    if error.kind == "retry" and not final and target["attempts"] < MAX_ATTEMPTS:
        wait = max(
            jobs.backoff_seconds(target["attempts"], jitter=False),
            min(error.retry_after or 0, MAX_WAIT),
        )
        at = tx.now + timedelta(seconds=wait)
        key = f"{SEND_JOB}:{target['id']}:{short_id(8)}"
        await jobs.enqueue(tx.conn, SEND_JOB, {"target": target["id"]}, run_at=at, key=key)
        values |= {"status": "retrying", "next_attempt_at": at, "job_key": key}
    else:
        values |= {"status": "failed", "next_attempt_at": None}
    await store.update_target(tx.conn, target["id"], values, tx.now)
    if error.kind == "reconnect" and target["account_id"]:
        await store.set_attention(tx.conn, target["account_id"], error.message, tx.now)
        await tx.record(
            SYSTEM_ACTOR,
            "social.account.attention",
            "social_account",
            target["account_id"],
            {"network": target["network"], "handle": target["handle"], "reason": error.message},
            notify={"socialAccount": target["account_id"]},
        )
    await _finish(
        tx, target, "social.post.failed" if values["status"] == "failed" else "social.post.retrying"
    )


async def _finish(tx: Write, target: dict[str, Any], action: str) -> None:
    status = await _rollup(tx, target["post_id"])
    await tx.record(
        SYSTEM_ACTOR,
        action,
        "social_post",
        target["post_id"],
        {"target": target["id"], "network": target["network"], "handle": target["handle"]},
        notify={"socialPost": target["post_id"], "status": status},
    )
