"""Id minting for the OAuth server (the spec's randomId and shortId).

Lengths are "not shown" in the spec: tokens, codes and secrets carry 256 bits
(43 URL-safe characters), client ids 72 bits (12 characters), as
common.ids mints them.
"""

from __future__ import annotations

from common.ids import random_id, short_id

__all__ = ["random_id", "short_id"]
