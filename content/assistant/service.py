"""The connected provider: connect (API key or OAuth), show, test, disconnect, and open it for a call.

One provider at a time (the row with id 1). Credentials arrive through the
admin API only, are sealed at once (purpose ``content.assistant``) and are
never returned: the provider's JSON carries a hint (the last four characters).
"""

from __future__ import annotations

import json
import secrets
import uuid
from collections.abc import AsyncIterator, Sequence
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

from common.crypto import Sealer, sha256_hex
from content.assistant import budget, store
from content.assistant.errors import NotConnected, provider_failure, refuse_unknown
from content.assistant.providers import (
    DEFAULT_URLS,
    KINDS,
    URL_KINDS,
    Connection,
    Event,
    ProviderError,
    TextDelta,
    ToolCall,
    Usage,
    oauth,
)
from content.assistant.providers import stream as provider_stream
from content.assistant.providers.addresses import check_reachable, url_problem
from content.assistant.toolbox import ToolSpec
from content.auth.principal import Actor, Principal
from content.context import Context
from content.errors import BadRequest, Problems
from content.people import store as people_store
from content.writes import write

SEAL_PURPOSE = "content.assistant"
CALLBACK_PATH = "/assistant/oauth/callback"
STATE_LIFETIME = timedelta(minutes=10)
# Refresh an OAuth access token this long before it expires.
REFRESH_MARGIN = timedelta(seconds=60)
MAX_MODEL = 200
MAX_KEY = 4000
LABELS = {
    "openai": "OpenAI (or any OpenAI-compatible server)",
    "anthropic": "Anthropic",
    "ollama": "Ollama on your own machine",
    "ollama-cloud": "Ollama Cloud",
}
# The synthetic tool of the connection test: it reads and changes nothing.
MARKER_TOOL = "connection_check"


def sealer(ctx: Context) -> Sealer:
    return Sealer(ctx.runtime.settings.secret, SEAL_PURPOSE)


def callback_url(ctx: Context) -> str:
    return ctx.runtime.settings.public_url.rstrip("/") + ctx.prefix + CALLBACK_PATH


def oauth_client(ctx: Context, kind: str) -> oauth.Client | None:
    return oauth.client_for(kind, ctx.config.ai_oauth.get(kind.replace("-", "")))


def _hint(secret: str) -> str:
    return f"…{secret[-4:]}" if len(secret) > 8 else "…"


def provider_json(ctx: Context, row: dict[str, Any] | None) -> dict[str, Any]:
    kinds = [
        {
            "kind": kind,
            "label": LABELS[kind],
            "needsKey": kind != "ollama",
            "hasUrl": kind in URL_KINDS,
            "defaultUrl": DEFAULT_URLS.get(kind),
            "oauth": oauth_client(ctx, kind) is not None,
        }
        for kind in KINDS
    ]
    provider = None
    if row is not None:
        provider = {
            "kind": row["kind"],
            "model": row["model"],
            "baseUrl": row["base_url"] or None,
            "auth": row["auth"],
            "keyHint": row["secret_hint"] or None,
            "connectedAt": row["created_at"].isoformat(),
            "updatedAt": row["updated_at"].isoformat(),
            "test": (
                None
                if row["tested_at"] is None
                else {
                    "ok": row["test_ok"],
                    "problem": row["test_problem"],
                    "at": row["tested_at"].isoformat(),
                }
            ),
        }
    return {"connected": row is not None, "provider": provider, "kinds": kinds}


async def get(ctx: Context) -> dict[str, Any]:
    async with ctx.db.connection() as conn:
        row = await store.provider(conn)
    return provider_json(ctx, row)


def _settings(
    ctx: Context, body: dict[str, Any], problems: Problems, known: tuple[str, ...]
) -> dict[str, str]:
    """kind, model and base URL of a connect body, checked."""
    refuse_unknown(body, known, problems)
    kind = body.get("kind")
    if kind not in KINDS:
        problems.add("kind", f"one of {', '.join(KINDS)}")
        kind = ""
    model = body.get("model")
    if not isinstance(model, str) or not model.strip() or len(model.strip()) > MAX_MODEL:
        problems.add("model", f"the model's name, 1 to {MAX_MODEL} characters")
        model = ""
    base_url = ""
    raw = body.get("baseUrl")
    if raw not in (None, ""):
        if kind == "ollama-cloud":
            problems.add("baseUrl", "Ollama Cloud has a fixed address")
        elif kind:
            problem = url_problem(kind, raw, allow_private=ctx.config.webhook_allow_private)
            if problem:
                problems.add("baseUrl", problem)
            else:
                base_url = str(raw).rstrip("/")
    return {"kind": str(kind), "model": str(model).strip(), "base_url": base_url}


async def connect(ctx: Context, principal: Principal, body: dict[str, Any]) -> dict[str, Any]:
    """PUT /api/assistant/provider {kind, model, baseUrl?, apiKey?}: replaces the one provider."""
    problems = Problems()
    values = _settings(ctx, body, problems, ("kind", "model", "baseUrl", "apiKey"))
    key = body.get("apiKey")
    secret = ""
    if values["kind"] == "ollama":
        if key not in (None, ""):
            problems.add("apiKey", "the local runtime takes no credential")
    elif values["kind"]:
        if not isinstance(key, str) or not key.strip() or len(key) > MAX_KEY:
            problems.add("apiKey", "the provider's API key is required")
        else:
            secret = key.strip()
    problems.raise_if_any()
    async with write(ctx) as tx:
        await store.put_provider(
            tx.conn,
            {
                **values,
                "auth": "api_key" if secret else "none",
                "secret_sealed": sealer(ctx).seal(secret) if secret else None,
                "secret_hint": _hint(secret) if secret else "",
            },
            principal.user.id,
            tx.now,
        )
        await tx.record(
            principal.actor(),
            "assistant.provider_connected",
            "assistant",
            "provider",
            {"kind": values["kind"], "model": values["model"]},
        )
    return await get(ctx)


async def disconnect(ctx: Context, principal: Principal) -> None:
    async with write(ctx) as tx:
        if not await store.delete_provider(tx.conn):
            raise NotConnected()
        await tx.record(
            principal.actor(), "assistant.provider_disconnected", "assistant", "provider"
        )


# --- OAuth ----------------------------------------------------------------------


async def oauth_start(ctx: Context, principal: Principal, body: dict[str, Any]) -> dict[str, Any]:
    """POST /api/assistant/provider/oauth {kind, model, baseUrl?}: the consent address."""
    problems = Problems()
    values = _settings(ctx, body, problems, ("kind", "model", "baseUrl"))
    problems.raise_if_any()
    client = oauth_client(ctx, values["kind"])
    if client is None:
        raise BadRequest(
            f"no OAuth client is registered for {values['kind']}"
            f" (AI_OAUTH_{values['kind'].upper().replace('-', '')}_CLIENT_ID); use an API key",
            "AI_OAUTH_UNAVAILABLE",
        )
    state = secrets.token_urlsafe(32)
    verifier, challenge = oauth.pkce()
    async with ctx.db.connection() as conn:
        await store.add_state(
            conn,
            {
                **values,
                "state_hash": sha256_hex(state),
                "user_id": principal.user.id,
                "verifier_sealed": sealer(ctx).seal(verifier),
                "expires_at": ctx.clock.now() + STATE_LIFETIME,
            },
        )
    url = oauth.authorize_url(
        client, state=state, challenge=challenge, redirect_uri=callback_url(ctx)
    )
    return {"url": url}


async def oauth_callback(ctx: Context, query: dict[str, str]) -> str:
    """GET /assistant/oauth/callback: finish the consent; where to send the browser."""
    back = ctx.prefix + "/admin/assistant"  # the assistant settings screen
    now = ctx.clock.now()
    state = query.get("state", "")
    async with ctx.db.connection() as conn:
        pending = await store.take_state(conn, sha256_hex(state), now) if state else None
    if pending is None:
        raise BadRequest(
            "this consent is unknown, used or expired; start again", "AI_OAUTH_STATE_INVALID"
        )
    client = oauth_client(ctx, pending["kind"])
    if client is None or "error" in query or not query.get("code"):
        reason = query.get("error_description") or query.get("error") or "no code returned"
        return back + "?" + urlencode({"oauth": "error", "reason": reason[:300]})
    try:
        tokens = await oauth.exchange(
            client,
            code=query["code"],
            verifier=sealer(ctx).open(pending["verifier_sealed"]),
            redirect_uri=callback_url(ctx),
            now=now,
        )
    except ProviderError as exc:
        return back + "?" + urlencode({"oauth": "error", "reason": exc.message[:300]})
    async with write(ctx) as tx:
        user = await people_store.get_user(tx.conn, pending["user_id"])
        if user is None:
            return back + "?" + urlencode({"oauth": "error", "reason": "the account is gone"})
        await store.put_provider(
            tx.conn,
            {
                "kind": pending["kind"],
                "model": pending["model"],
                "base_url": pending["base_url"],
                "auth": "oauth",
                "secret_sealed": _seal_tokens(ctx, tokens),
                "secret_hint": _hint(tokens.access),
                "expires_at": tokens.expires_at,
            },
            user.id,
            tx.now,
        )
        await tx.record(
            Actor(kind="user", name=user.name or user.email, user_id=user.id),
            "assistant.provider_connected",
            "assistant",
            "provider",
            {"kind": pending["kind"], "model": pending["model"], "auth": "oauth"},
        )
    return back + "?" + urlencode({"oauth": "connected"})


def _seal_tokens(ctx: Context, tokens: oauth.Tokens) -> str:
    return sealer(ctx).seal(json.dumps({"access": tokens.access, "refresh": tokens.refresh}))


# --- a call -----------------------------------------------------------------------


async def connection(ctx: Context) -> Connection:
    """The connected provider, its credential opened (an expiring OAuth token refreshed)."""
    async with ctx.db.connection() as conn:
        row = await store.provider(conn)
    if row is None:
        raise NotConnected()
    credential: str | None = None
    if row["auth"] == "api_key":
        credential = sealer(ctx).open(row["secret_sealed"])
    elif row["auth"] == "oauth":
        credential = await _oauth_access(ctx, row)
    return Connection(
        row["kind"],
        row["model"],
        row["base_url"],
        credential,
        allow_private=ctx.config.webhook_allow_private,
    )


async def _oauth_access(ctx: Context, row: dict[str, Any]) -> str:
    tokens = json.loads(sealer(ctx).open(row["secret_sealed"]))
    now = ctx.clock.now()
    if row["expires_at"] is None or row["expires_at"] - REFRESH_MARGIN > now:
        return str(tokens["access"])
    client = oauth_client(ctx, row["kind"])
    if client is None:
        raise provider_failure(
            ProviderError("auth", "the OAuth client is no longer registered"), row["kind"]
        )
    try:
        fresh = await oauth.refresh(client, tokens.get("refresh", ""), now)
    except ProviderError as exc:
        raise provider_failure(exc, row["kind"]) from None
    async with ctx.db.connection() as conn:
        await store.set_tokens(conn, _seal_tokens(ctx, fresh), fresh.expires_at, now)
    return fresh.access


async def stream(
    ctx: Context,
    user_id: str | None,
    connection: Connection,
    system: str,
    messages: Sequence[dict[str, Any]],
    tools: Sequence[ToolSpec] = (),
) -> AsyncIterator[Event]:
    """One metered model turn: the address judged, the usage recorded against the person."""
    url = connection.base_url or DEFAULT_URLS.get(connection.kind, "")
    if connection.kind != "ollama-cloud" and url:
        problem = await check_reachable(
            connection.kind, url, allow_private=ctx.config.webhook_allow_private
        )
        if problem:
            raise ProviderError("refused", problem)
    async for event in provider_stream(connection, system, messages, tools):
        if isinstance(event, Usage):
            await budget.record(ctx, user_id, event)
        yield event


# --- the connection test --------------------------------------------------------

TEST_SYSTEM = (
    "This is an automated connection test. Call the tool {tool} exactly once with the"
    " argument marker set to {marker}. Do not answer in words."
)
PROBLEMS = {
    "auth": "auth",
    "not_found": "model_not_found",
    "unreachable": "unreachable",
    "refused": "unreachable",
    "rate_limited": "rate_limited",
}


async def check_connection(ctx: Context, principal: Principal) -> dict[str, Any]:
    """POST /api/assistant/provider/test: streamed tool calling with a synthetic marker.

    Reads and changes no content: the one tool offered is the marker tool, and
    it is never run. Answers ``{ok, problem, message}``; ``problem`` is one of
    unreachable, auth, model_not_found, rate_limited, no_streaming,
    no_tool_calling or provider_error.
    """
    budget.require_spender(principal)
    await budget.check(ctx, principal.user.id)
    conn_ = await connection(ctx)
    marker = f"m{uuid.uuid4().hex[:12]}"
    spec = ToolSpec(
        MARKER_TOOL,
        "Connection test: echo the marker you were given. Reads and changes nothing.",
        {
            "type": "object",
            "properties": {"marker": {"type": "string"}},
            "required": ["marker"],
            "additionalProperties": False,
        },
    )
    system = TEST_SYSTEM.format(tool=MARKER_TOOL, marker=marker)
    events = 0
    called: list[ToolCall] = []
    problem: str | None = None
    message = "streamed tool calling works"
    try:
        async for event in stream(
            ctx,
            principal.user.id,
            conn_,
            system,
            [{"role": "user", "text": f"Call {MARKER_TOOL} with marker {marker}."}],
            [spec],
        ):
            if isinstance(event, TextDelta | ToolCall):
                events += 1
            if isinstance(event, ToolCall):
                called.append(event)
    except ProviderError as exc:
        problem = PROBLEMS.get(exc.kind, "provider_error")
        if exc.kind == "bad_request" and "tool" in exc.message.lower():
            problem = "no_tool_calling"
        message = exc.message
    if problem is None:
        if events == 0:
            problem, message = "no_streaming", "the provider answered without streaming"
        elif not any(c.name == MARKER_TOOL and c.arguments.get("marker") == marker for c in called):
            problem = "no_tool_calling"
            message = "the model answered but did not call the test tool; pick a tool-calling model"
    async with ctx.db.connection() as conn:
        await store.set_test(conn, problem is None, problem, ctx.clock.now())
    return {"ok": problem is None, "problem": problem, "message": message}
