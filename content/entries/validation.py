"""Validating what an entry holds: title, slug, locale, data and data.__layout."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from common.db import Conn
from content.entries import store
from content.entries.serializers import LAYOUT_KEY
from content.errors import Problems
from content.media.checks import check_images
from content.types.fields import FieldDefinition, References, clean_object

SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
LOCALE_RE = re.compile(r"^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$")
MAX_SLUG = 200
MAX_TITLE = 300
DEFAULT_LOCALE = "en"
# /content/:type/single is the delivery route of single-kind types.
RESERVED_SLUGS = {"single"}
MAX_SECTIONS = 200


def slugify(title: str) -> str:
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-")
    return slug[:MAX_SLUG].rstrip("-") or "entry"


def check_title(value: Any, p: Problems) -> str:
    if not isinstance(value, str) or not value.strip():
        p.add("title", "is required")
        return ""
    if len(value) > MAX_TITLE:
        p.add("title", f"must be at most {MAX_TITLE} characters")
    return value.strip()


def check_slug(value: Any, p: Problems) -> str:
    if not isinstance(value, str) or not SLUG_RE.match(value) or len(value) > MAX_SLUG:
        p.add("slug", "must be lowercase letters and digits joined by single hyphens")
        return ""
    if value in RESERVED_SLUGS:
        p.add("slug", f"{value!r} is reserved")
    return value


def check_locale(value: Any, p: Problems) -> str:
    if not isinstance(value, str) or not LOCALE_RE.match(value):
        p.add("locale", "must be a language tag such as en or pt-BR")
        return DEFAULT_LOCALE
    return value


def check_layout(value: Any, p: Problems) -> dict[str, list[str]] | None:
    """data.__layout = {order: [section id], hidden: [section id]}."""
    if value is None:
        return None
    if not isinstance(value, dict):
        p.add(LAYOUT_KEY, "must be an object with order and hidden")
        return None
    for key in value:
        if key not in ("order", "hidden"):
            p.add(f"{LAYOUT_KEY}.{key}", "is not part of a layout")
    layout: dict[str, list[str]] = {}
    for name in ("order", "hidden"):
        ids = value.get(name, [])
        if not isinstance(ids, list) or len(ids) > MAX_SECTIONS:
            p.add(f"{LAYOUT_KEY}.{name}", f"must be a list of at most {MAX_SECTIONS} section ids")
            continue
        for i, section in enumerate(ids):
            if not isinstance(section, str) or not section or len(section) > 100:
                p.add(f"{LAYOUT_KEY}.{name}.{i}", "must be a section id")
        if len(set(map(str, ids))) != len(ids):
            p.add(f"{LAYOUT_KEY}.{name}", "must not repeat a section id")
        layout[name] = ids
    return layout


def check_data(
    data: Any, fields: list[FieldDefinition], p: Problems
) -> tuple[dict[str, Any], References]:
    refs = References()
    if not isinstance(data, dict):
        p.add("data", "must be an object")
        return {}, refs
    content = {k: v for k, v in data.items() if k != LAYOUT_KEY}
    cleaned = clean_object(fields, content, "", p, refs)
    layout = check_layout(data.get(LAYOUT_KEY), p)
    if layout is not None:
        cleaned[LAYOUT_KEY] = layout
    return cleaned, refs


async def check_references(conn: Conn, refs: References, p: Problems) -> None:
    """Enforced on save: a reference names a live entry of the declared type, a
    media or gallery field names image media of the library."""
    await check_images(conn, refs.media, p)
    if not refs.items:
        return
    found = await store.reference_types(conn, sorted({entry_id for _, _, entry_id in refs.items}))
    for path, target, entry_id in refs.items:
        actual = found.get(entry_id)
        if actual is None:
            p.add(path, f"no entry {entry_id!r} exists")
        elif actual != target:
            p.add(path, f"must be a {target} entry, not a {actual} entry")
