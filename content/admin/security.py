"""Headers every admin page carries, and where a page may send you after signing in."""

from __future__ import annotations

from urllib.parse import urlsplit

from common.pages import page_headers

# The strict page headers every service's pages carry (common/pages.py);
# uploads are previewed from blob: URLs.
IMG_SRC = "'self' data: blob:"
PAGE_HEADERS = page_headers(img_src=IMG_SRC)

MAX_NEXT = 2000


def safe_next(raw: str | None, home: str) -> str:
    """A path of this mount to go to after signing in, or ``home``.

    Only ``/admin...`` paths are kept: no scheme, host, protocol-relative
    ``//host``, backslash or control character.
    """
    if not raw or len(raw) > MAX_NEXT or not raw.startswith(home):
        return home
    if any(ord(c) < 0x21 or c == "\\" for c in raw) or "//" in raw:
        return home
    parts = urlsplit(raw)
    if parts.scheme or parts.netloc:
        return home
    return raw
