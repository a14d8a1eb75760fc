"""Authlib's httpx OAuth client, imported without its httpx2 announcement.

Authlib 1.9 warns on import that its httpx integration will move to httpx2;
the pinned httpx client is the one these tests mean to use.
"""

from __future__ import annotations

import warnings

from authlib.deprecate import AuthlibDeprecationWarning

with warnings.catch_warnings():
    warnings.simplefilter("ignore", AuthlibDeprecationWarning)
    from authlib.integrations.httpx_client import AsyncOAuth2Client

__all__ = ["AsyncOAuth2Client"]
