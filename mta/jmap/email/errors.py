"""Method-level errors of the Email methods (RFC 8620 3.6.2), raised as exceptions.

The JMAP dispatcher answers a raised :class:`MethodError` as the
``["error", {"type": ..., "description": ...}, callId]`` response; the webmail
API maps the same types to its HTTP errors.
"""

from __future__ import annotations

from typing import Any


class MethodError(Exception):
    def __init__(self, type: str, description: str = "", **extra: Any) -> None:
        super().__init__(description or type)
        self.type = type
        self.description = description
        self.extra = extra

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, **self.extra}
        if self.description:
            out["description"] = self.description
        return out


def set_error(type: str, description: str = "", **extra: Any) -> dict[str, Any]:
    """A SetError object (RFC 8620 5.3) for one create, update or destroy."""
    out: dict[str, Any] = {"type": type, **extra}
    if description:
        out["description"] = description
    return out
