"""Core/echo (RFC 8620 4)."""

from __future__ import annotations

from typing import Any

from mta.jmap.registry import CORE, MethodCall, register


async def echo(call: MethodCall) -> dict[str, Any]:
    return call.arguments


register("Core/echo", echo, capability=CORE)
