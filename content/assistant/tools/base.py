"""What every tool is made of, and the helpers the areas share.

A tool is a :class:`Tool`: its name, kind (read, propose or move), the
permission the spec names, a description and its parameters as a JSON Schema
(``additionalProperties: false`` at every level the tool defines). A read
tool's ``run`` answers from the same service functions and serializers as its
admin route. A propose tool's ``draft`` checks the arguments against the
service's own rules without writing, and says what would change (a
:class:`Draft`); its ``apply`` later calls the service function the manual
edit route calls, as the person. ``current`` reads the target as its admin
route shows it, so the proposal records the target's version (a digest of
that JSON) and apply can tell when it changed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from common.openapi import Schema
from content.auth.principal import Principal
from content.context import Context
from content.errors import ContentError
from content.http import Paging

Args = dict[str, Any]
Json = dict[str, Any]


class Refused(Exception):
    """The arguments cannot become a proposal; the model is told why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Target:
    kind: str
    id: str | None


@dataclass(frozen=True)
class Draft:
    """What a proposal would change, computed when it is made."""

    target: Target
    # Each changed field: {"field", "before", "after"}.
    diff: list[Json]
    # The permissions applying needs (the tool's, and content.publish to go live...).
    needs: tuple[str, ...]
    # The target's JSON as its admin route shows it (None: it does not exist yet).
    before: Json | None = None
    # A menu deleted is gone: the diff says so.
    recoverable: bool = True
    # The arguments as kept, when the tool rewrites them (defaults filled in).
    arguments: Args | None = None


Run = Callable[[Context, Principal, Args], Awaitable[Any]]
MakeDraft = Callable[[Context, Principal, Args], Awaitable[Draft]]
# (context, person, stored arguments, target id, what the person added at apply)
# -> (the route's answer, the secret shown once or None)
Apply = Callable[[Context, Principal, Args, "str | None", Args], Awaitable["Applied"]]
Current = Callable[[Context, Principal, str], Awaitable["Json | None"]]


@dataclass(frozen=True)
class Applied:
    """What applying answered: the route's JSON, and a secret shown this once."""

    result: Any
    secret: Json | None = None


@dataclass(frozen=True)
class Tool:
    name: str
    kind: str  # read, propose or move
    permission: str
    description: str
    parameters: Schema
    run: Run | None = None
    draft: MakeDraft | None = None
    apply: Apply | None = None
    current: Current | None = None
    # What the person may add when applying (a pasted client secret, a password).
    apply_body: Schema = field(default_factory=lambda: params({}))
    # Offered only when the site has visual page definitions (get_page_layout).
    visual_only: bool = False


def params(properties: Mapping[str, Schema], *, required: tuple[str, ...] = ()) -> Schema:
    """A tool's parameters: an object refusing members it does not name."""
    schema: Schema = {
        "type": "object",
        "properties": dict(properties),
        "additionalProperties": False,
    }
    if required:
        schema["required"] = list(required)
    return schema


def read(
    name: str, permission: str, description: str, parameters: Schema, run: Run, **extra: Any
) -> Tool:
    return Tool(name, "read", permission, description, parameters, run=run, **extra)


def propose(
    name: str,
    permission: str,
    description: str,
    parameters: Schema,
    *,
    draft: MakeDraft,
    apply: Apply,
    current: Current | None = None,
    apply_body: Schema | None = None,
) -> Tool:
    return Tool(
        name,
        "propose",
        permission,
        description,
        parameters,
        draft=draft,
        apply=apply,
        current=current,
        apply_body=apply_body if apply_body is not None else params({}),
    )


def jsonable(value: Any) -> Any:
    """``value`` as the JSON an admin route sends (datetimes as ISO 8601)."""
    return json.loads(json.dumps(value, default=_default))


def _default(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON")


def digest(value: Any) -> str:
    """The version of a target: a digest of its JSON as its admin route shows it."""
    text = json.dumps(jsonable(value), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def changes(
    before: Mapping[str, Any] | None, after: Mapping[str, Any], prefix: str = ""
) -> list[Json]:
    """The per-field diff of ``after`` (the fields a proposal sets) against ``before``."""
    out = []
    for key, value in after.items():
        old = (before or {}).get(key)
        if jsonable(old) != jsonable(value):
            out.append(
                {"field": f"{prefix}{key}", "before": jsonable(old), "after": jsonable(value)}
            )
    return out


def refused_by(exc: ContentError) -> Refused:
    """A service's refusal (VALIDATION_FAILED and the rest) in words the model can act on."""
    fields = (exc.details or {}).get("fields") if isinstance(exc.details, dict) else None
    if fields:
        named = "; ".join(f"{f.get('key')}: {f.get('message')}" for f in fields)
        return Refused(f"{exc.message}: {named}")
    return Refused(exc.message)


def unchanged(what: str) -> Refused:
    return Refused(f"this would change nothing: {what} already has these values")


@dataclass(frozen=True)
class OffsetPaging(Paging):
    """A page that starts at any offset (the tools page by offset, the routes by page)."""

    start: int = 0

    @property
    def offset(self) -> int:
        return self.start


def window(args: Args, default: int = 20) -> OffsetPaging:
    return OffsetPaging(
        page=1, limit=int(args.get("limit", default)), start=int(args.get("offset", 0))
    )


def offset_meta(total: int, paging: OffsetPaging) -> Json:
    return {"total": total, "offset": paging.offset, "limit": paging.limit}


def without(value: Json, *keys: str) -> Json:
    return {k: v for k, v in value.items() if k not in keys}


@contextmanager
def checking() -> Iterator[None]:
    """Inside: a service's refusal becomes the model's :class:`Refused`."""
    try:
        yield
    except ContentError as exc:
        raise refused_by(exc) from None
