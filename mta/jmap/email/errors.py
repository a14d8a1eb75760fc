"""Method-level errors of the Email methods (RFC 8620 3.6.2): the registry's own.

The JMAP dispatcher answers a raised :class:`MethodError` as the
``["error", {"type": ..., "description": ...}, callId]`` response; the webmail
API maps the same types to its HTTP errors.
"""

from __future__ import annotations

from mta.jmap.registry import MethodError, SetResponse, set_error

__all__ = ["MethodError", "SetResponse", "set_error"]
