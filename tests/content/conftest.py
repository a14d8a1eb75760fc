"""Fixtures for the CMS tests: a root-mounted client and people of every role."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

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
