"""Identifier minting: URL-safe random strings from the ``secrets`` module."""

from __future__ import annotations

import secrets

# 32 bytes = 256 bits: for tokens, codes and anything that must not be guessed.
RANDOM_ID_BYTES = 32
# 9 bytes = 72 bits, 12 characters: for public ids that must be unique, not secret.
SHORT_ID_BYTES = 9


def random_id(nbytes: int = RANDOM_ID_BYTES) -> str:
    """An unguessable URL-safe id (43 characters by default)."""
    return secrets.token_urlsafe(nbytes)


def short_id(nbytes: int = SHORT_ID_BYTES) -> str:
    """A short URL-safe id (12 characters by default)."""
    return secrets.token_urlsafe(nbytes)


def prefixed_token(prefix: str, nbytes: int = RANDOM_ID_BYTES) -> str:
    """A secret token that says what it is, e.g. ``svc_...`` or ``svcagt_...``."""
    return prefix + secrets.token_urlsafe(nbytes)
