"""The JMAP method registry: one line per method, ``register("Mailbox/get", handler)``.

Every method is a plain coroutine taking a :class:`MethodCall` and returning
its response arguments (a dict). The protocol layer (``mta/jmap/api.py``)
resolves back-references before the call, turns :class:`MethodError` into an
``error`` response (RFC 8620 3.6.2), and checks that the method's capability
is in the request's ``using`` (else ``unknownMethod``)::

    from mta.jmap.registry import MethodCall, register

    async def email_get(call: MethodCall) -> dict[str, Any]:
        account = call.account            # accountNotFound raised for you
        ids = call.arguments.get("ids")
        async with call.connection() as conn:
            ...
        return {"accountId": account.id, "state": ..., "list": [...], "notFound": [...]}

    register("Email/get", email_get)    # capability defaults to urn:ietf:params:jmap:mail

Inside a handler: ``call.fail("invalidArguments", "why")`` raises the method
error; ``call.created("k1", id)`` records a creation id for ``#k1``
references (and the response's ``createdIds``); ``call.resolve_id("#k1")``
turns a creation reference into its id (or raises ``invalidArguments``);
``call.respond(name, args)`` adds an implicit response after this one (e.g.
Email/copy's ``onSuccessDestroyOriginal`` Email/set); ``call.now`` is the
injectable clock's time; ``call.limits`` the session's limits.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, NoReturn

from common.db import Conn

if TYPE_CHECKING:
    from mta.jmap.context import JmapContext

CORE = "urn:ietf:params:jmap:core"
MAIL = "urn:ietf:params:jmap:mail"
SUBMISSION = "urn:ietf:params:jmap:submission"
VACATION = "urn:ietf:params:jmap:vacationresponse"
BLOB = "urn:ietf:params:jmap:blob"

# RFC 8620 3.6.2 and RFC 8621: the method-level error types a handler may raise.
METHOD_ERRORS = frozenset(
    {
        "serverUnavailable",
        "serverFail",
        "serverPartialFail",
        "unknownMethod",
        "invalidArguments",
        "invalidResultReference",
        "forbidden",
        "accountNotFound",
        "accountNotSupportedByMethod",
        "accountReadOnly",
        # /get, /set, /changes, /query, /queryChanges, /copy (RFC 8620 5.x)
        "requestTooLarge",
        "stateMismatch",
        "cannotCalculateChanges",
        "anchorNotFound",
        "unsupportedSort",
        "unsupportedFilter",
        "tooManyChanges",
        "fromAccountNotFound",
        "fromAccountNotSupportedByMethod",
    }
)


class MethodError(Exception):
    """A method-level error: the call answers ``["error", {"type": ..., ...}, callId]``."""

    def __init__(self, type_: str, description: str | None = None, **extra: Any) -> None:
        super().__init__(description or type_)
        self.type = type_
        self.description = description
        self.extra = extra

    def arguments(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, **self.extra}
        if self.description:
            out["description"] = self.description
        return out


def set_error(type_: str, description: str | None = None, **extra: Any) -> dict[str, Any]:
    """A SetError object (RFC 8620 5.3) for notCreated / notUpdated / notDestroyed."""
    out: dict[str, Any] = {"type": type_, **extra}
    if description:
        out["description"] = description
    return out


@dataclass
class SetResponse:
    """The response of a /set (RFC 8620 5.3), filled as the objects are processed.

    One builder for every /set method (as Stalwart's SetResponse): empty
    maps and lists are answered as null, and ``accountId``, ``oldState`` and
    ``newState`` only where the type has an account (PushSubscription has none).
    """

    account_id: str | None = None
    old_state: str | None = None
    new_state: str | None = None
    created: dict[str, Any] = field(default_factory=dict)
    updated: dict[str, Any] = field(default_factory=dict)
    destroyed: list[str] = field(default_factory=list)
    not_created: dict[str, Any] = field(default_factory=dict)
    not_updated: dict[str, Any] = field(default_factory=dict)
    not_destroyed: dict[str, Any] = field(default_factory=dict)

    def arguments(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.account_id is not None:
            out |= {
                "accountId": self.account_id,
                "oldState": self.old_state,
                "newState": self.new_state,
            }
        return out | {
            "created": self.created or None,
            "updated": self.updated or None,
            "destroyed": self.destroyed or None,
            "notCreated": self.not_created or None,
            "notUpdated": self.not_updated or None,
            "notDestroyed": self.not_destroyed or None,
        }


@dataclass(frozen=True)
class Account:
    """One JMAP account: one hosted address (its mailbox store is keyed by address id)."""

    id: str  # the JMAP accountId (the address id)
    address_id: str
    email: str
    owner_account_id: str  # the panel account (mail.accounts) that owns the address
    display_name: str = ""
    is_read_only: bool = False


@dataclass(frozen=True)
class Principal:
    """Who authenticated, and the accounts this session gives them."""

    username: str
    accounts: tuple[Account, ...]
    # "basic:<address id>" or "oauth:<panel account id>": the rate-limit key.
    key: str
    scopes: frozenset[str] = frozenset()

    @property
    def primary(self) -> Account:
        return self.accounts[0]

    def account(self, account_id: object) -> Account | None:
        for account in self.accounts:
            if account.id == account_id:
                return account
        return None


@dataclass
class RequestState:
    """What the calls of one request share: creation ids and the extra responses."""

    using: frozenset[str]
    created_ids: dict[str, str] = field(default_factory=dict)
    # Responses a handler adds after its own (name, arguments).
    extra: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


@dataclass
class MethodCall:
    name: str
    arguments: dict[str, Any]
    call_id: str
    ctx: JmapContext
    principal: Principal
    request: RequestState

    # -- who and when --------------------------------------------------------
    @property
    def account(self) -> Account:
        """The account named by ``accountId``; ``accountNotFound`` when it is not ours."""
        return self.account_for("accountId")

    def account_for(self, argument: str) -> Account:
        account_id = self.arguments.get(argument)
        if not isinstance(account_id, str):
            self.fail("invalidArguments", f"{argument} is required")
        account = self.principal.account(account_id)
        if account is None:
            self.fail("fromAccountNotFound" if argument == "fromAccountId" else "accountNotFound")
        return account

    @property
    def now(self) -> datetime:
        return self.ctx.runtime.clock.now()

    @property
    def limits(self) -> Any:
        return self.ctx.limits

    @property
    def using(self) -> frozenset[str]:
        return self.request.using

    # -- the database ---------------------------------------------------------
    def connection(self) -> AbstractAsyncContextManager[Conn]:
        """A pooled autocommit connection."""
        return self.ctx.runtime.db.connection()

    def transaction(self) -> AbstractAsyncContextManager[Conn]:
        """A pooled connection inside BEGIN ... COMMIT."""
        return self.ctx.runtime.db.transaction()

    # -- errors and creation ids ---------------------------------------------
    def fail(self, type_: str, description: str | None = None, **extra: Any) -> NoReturn:
        raise MethodError(type_, description, **extra)

    def created(self, creation_id: str, object_id: str) -> None:
        self.request.created_ids[creation_id] = object_id

    def resolve_id(self, value: str) -> str:
        """``#k1`` -> the id created as ``k1`` earlier in this request; other ids unchanged."""
        if isinstance(value, str) and value.startswith("#"):
            found = self.request.created_ids.get(value[1:])
            if found is None:
                self.fail("invalidArguments", f"unknown creation id {value}")
            return found
        return value

    def respond(self, name: str, arguments: dict[str, Any]) -> None:
        """Add an implicit response after this call's own (same callId)."""
        self.request.extra.append((name, arguments))


Handler = Callable[[MethodCall], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class Method:
    name: str
    handler: Handler
    # The request's ``using`` must name one of these, else unknownMethod (core
    # methods too: a request that opted in to nothing may call nothing).
    capabilities: tuple[str, ...]

    def allowed(self, using: frozenset[str]) -> bool:
        return any(c in using for c in self.capabilities)


METHODS: dict[str, Method] = {}


def register(name: str, handler: Handler, *, capability: str | tuple[str, ...] = MAIL) -> Handler:
    """Serve ``name`` (e.g. "Email/get") with ``handler``; the last registration wins."""
    caps = (capability,) if isinstance(capability, str) else capability
    METHODS[name] = Method(name=name, handler=handler, capabilities=caps)
    return handler


def method(name: str, *, capability: str | tuple[str, ...] = MAIL) -> Callable[[Handler], Handler]:
    """Decorator form of :func:`register`."""

    def wrap(handler: Handler) -> Handler:
        return register(name, handler, capability=capability)

    return wrap


@dataclass(frozen=True)
class Blob:
    """A blob an account may read: its bytes on demand, for download, Blob/copy, parsing."""

    blob_id: str
    size: int
    type: str
    chunks: Callable[[], Any]  # () -> AsyncIterator[bytes]


# (ctx, account, blobId) -> Blob | None: how a blob id the account can see is read.
# The core serves uploads and whole messages; Email adds its part blob ids with one line.
BlobResolver = Callable[["JmapContext", Account, str], Awaitable[Blob | None]]
BLOB_RESOLVERS: list[BlobResolver] = []


def register_blob_resolver(resolver: BlobResolver) -> BlobResolver:
    BLOB_RESOLVERS.append(resolver)
    return resolver


async def resolve_blob(ctx: JmapContext, account: Account, blob_id: str) -> Blob | None:
    """The blob ``blob_id`` as ``account`` may read it, or None (never another account's)."""
    if not isinstance(blob_id, str) or not blob_id or len(blob_id) > 255:
        return None
    for resolver in BLOB_RESOLVERS:
        found = await resolver(ctx, account, blob_id)
        if found is not None:
            return found
    return None
