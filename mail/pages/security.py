"""Headers every page carries, and the one rule for where a page may send you next."""

from __future__ import annotations

from urllib.parse import urlsplit

from common.pages import page_headers

# The strict page headers every service's pages carry (common/pages.py).
PAGE_HEADERS = page_headers()

HOME = "/"
MAX_NEXT = 4000


def safe_next(raw: str | None) -> str:
    """A same-origin relative path to go to after signing in, or the home page.

    Only ``/path?query`` is kept: no scheme, no host, no protocol-relative
    ``//host`` (nor ``/\\host``, which browsers read the same way), no
    control characters. Anything else is not an error, just ignored.
    """
    if not raw or len(raw) > MAX_NEXT or not raw.startswith("/"):
        return HOME
    if raw.startswith(("//", "/\\")) or any(ord(c) < 0x21 or c == "\\" for c in raw):
        return HOME
    parts = urlsplit(raw)
    if parts.scheme or parts.netloc:
        return HOME
    return raw
