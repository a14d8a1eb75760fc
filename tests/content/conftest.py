"""Fixtures for the CMS tests: a root-mounted client and people of every role."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from common.runtime import Runtime
from content.design import Property, Surface
from content.options import ContentOptions
from content.service import ContentService
from tests.content.factories import Person, make_user

ROLES = ("viewer", "author", "editor", "admin", "owner")


@pytest.fixture
async def cms(service_client: Callable[[str], Awaitable[Any]]) -> Any:
    """The CMS served at the root, as `python -m gateway --only content` serves it."""
    return await service_client("content")


@pytest.fixture
def person(runtime: Any) -> Callable[..., Awaitable[Person]]:
    async def make(role: str = "editor", **kwargs: Any) -> Person:
        return await make_user(runtime.db, runtime.clock, role, **kwargs)

    return make


@pytest.fixture
async def team(person: Callable[..., Awaitable[Person]]) -> dict[str, Person]:
    """One person of every role."""
    return {role: await person(role) for role in ROLES}


# The sample plugins (tests/content/plugin_dir) and the host's design surface.
PLUGIN_DIR = Path(__file__).parent / "plugin_dir"
PLUGIN_ENV = {"PLUGIN_DIR": str(PLUGIN_DIR), "PLUGIN_AUTOENABLE": "gallery,broken,absent"}
HOST_SURFACES = [
    Surface(
        "header",
        "Site header",
        [
            Property("background", "color", default="#ffffff"),
            Property("font", "font"),
            Property("padding", "spacing", default="1rem"),
        ],
    )
]

Start = Callable[..., Awaitable[tuple[ContentService, Any]]]


@pytest.fixture
def plugin_runtime(runtime: Runtime) -> Runtime:
    """The runtime with PLUGIN_DIR and PLUGIN_AUTOENABLE set (and WEBHOOK_ALLOW_PRIVATE)."""
    environ = {**PLUGIN_ENV, "WEBHOOK_ALLOW_PRIVATE": "true"}
    return dataclasses.replace(
        runtime, settings=dataclasses.replace(runtime.settings, environ=environ)
    )


@pytest.fixture
def start(plugin_runtime: Runtime, aiohttp_client: Any) -> Start:
    """Start the CMS with the sample plugins as the gateway does (lifespan included).

    Call it again after closing the client to restart on the same database.
    """

    async def make(**options: Any) -> tuple[ContentService, Any]:
        service = ContentService(
            plugin_runtime, ContentOptions(design_surfaces=HOST_SURFACES, **options)
        )
        app = service.create_app()

        async def lifespan(app: web.Application) -> AsyncIterator[None]:
            async with service.lifespan():  # type: ignore[union-attr]
                yield

        app.cleanup_ctx.append(lifespan)
        return service, await aiohttp_client(app)

    return make
