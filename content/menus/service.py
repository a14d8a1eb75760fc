"""Menus: named trees of links, checked when saved and stored exactly as saved.

An item is ``{label, url}`` (an address kept as written) or ``{label,
entryId}`` (an entry, turned into an address on delivery by
menus/resolution.py), with optional ``children``. Addresses are http(s),
mailto:, tel: or relative; every other scheme (javascript:, data: ...) is
refused, since a site renders them as links. Trees are bounded in depth and
size (docs/content.md, "Menus").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import psycopg2.errors

from common.db import Conn
from common.ids import short_id
from content.auth.principal import Principal
from content.context import Context
from content.entries import store as entry_store
from content.errors import Conflict, NotFound, Problems
from content.menus import store
from content.menus.store import Menu
from content.writes import Write, write

MENU_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
MAX_LABEL = 200
MAX_URL = 2048
# A top level and three nested levels; two hundred items in all.
MAX_DEPTH = 4
MAX_ITEMS = 200
ITEM_KEYS = {"label", "url", "entryId", "children"}
MENU_KEYS = {"name", "label", "items"}
LINK_SCHEMES = ("http", "https", "mailto", "tel")
_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")


def url_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a menu link, or None when it can."""
    if not isinstance(value, str) or not value or len(value) > MAX_URL:
        return f"must be an address of 1 to {MAX_URL} characters"
    # Browsers drop tabs and newlines inside a scheme ("java\tscript:") and
    # read a backslash as a slash; neither belongs in a link anyway.
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 or c == "\\" for c in value):
        return "must not contain spaces, control characters or backslashes"
    match = _SCHEME_RE.match(value)
    if match is None:
        if value.startswith("//"):
            return "must name its scheme (https://...) or be a path on this site"
        return None  # relative: /about, #top, ?page=2, contact.html
    scheme = match.group(1).lower()
    if scheme not in LINK_SCHEMES:
        return f"{scheme}: links are not allowed; use http(s), mailto:, tel: or a relative address"
    rest = value[match.end() :]
    if scheme in ("http", "https") and not urlsplit(value).netloc:
        return "must be an absolute http(s) URL with a host"
    if not rest:
        return f"must say what the {scheme}: link points at"
    return None


@dataclass
class _Tree:
    """What checking one tree found: field errors, its size, the entries it links."""

    problems: Problems
    count: int = 0
    entry_ids: dict[str, str] = field(default_factory=dict)  # entry id -> key of first use


def _check_items(value: Any, key: str, depth: int, tree: _Tree) -> None:
    p = tree.problems
    if not isinstance(value, list):
        p.add(key, "must be a list of menu items")
        return
    if value and depth > MAX_DEPTH:
        p.add(key, f"menus nest at most {MAX_DEPTH} levels deep")
        return
    for i, item in enumerate(value):
        at = f"{key}.{i}"
        tree.count += 1
        if not isinstance(item, dict):
            p.add(at, "must be an object {label, url or entryId, children?}")
            continue
        for unknown in sorted(set(item) - ITEM_KEYS):
            p.add(f"{at}.{unknown}", "is not a menu item property")
        label = item.get("label")
        if not isinstance(label, str) or not label.strip() or len(label) > MAX_LABEL:
            p.add(f"{at}.label", f"must be a non-empty string of at most {MAX_LABEL} characters")
        if ("url" in item) == ("entryId" in item):
            p.add(at, "must have either url or entryId")
        elif "url" in item:
            problem = url_problem(item["url"])
            if problem:
                p.add(f"{at}.url", problem)
        elif not isinstance(item["entryId"], str) or not item["entryId"]:
            p.add(f"{at}.entryId", "must be an entry id")
        else:
            tree.entry_ids.setdefault(item["entryId"], f"{at}.entryId")
        if "children" in item:
            _check_items(item["children"], f"{at}.children", depth + 1, tree)


async def check_items(conn: Conn, value: Any, p: Problems) -> list[dict[str, Any]]:
    """The items of a menu body, problems added to ``p``; linked entries must be live."""
    tree = _Tree(p)
    _check_items(value, "items", 1, tree)
    if tree.count > MAX_ITEMS:
        p.add("items", f"a menu holds at most {MAX_ITEMS} items")
    if tree.entry_ids:
        live = await entry_store.reference_types(conn, list(tree.entry_ids))
        for entry_id, at in tree.entry_ids.items():
            if entry_id not in live:
                p.add(at, "is not the id of an entry (trashed entries cannot be linked)")
    return value if isinstance(value, list) else []


def _label(body: dict[str, Any], default: str, p: Problems) -> str:
    label = body.get("label", default)
    if not isinstance(label, str) or not label.strip() or len(label) > MAX_LABEL:
        p.add("label", f"must be a non-empty string of at most {MAX_LABEL} characters")
        return ""
    return label.strip()


async def _changed(tx: Write, actor: Principal, action: str, menu: Menu) -> None:
    """Activity and the change notification (delivery serves menus)."""
    summary = {"label": menu.label, "items": _count(menu.items)}
    await tx.record(actor.actor(), action, "menu", menu.name, summary, notify={"menu": menu.name})


def _count(items: list[dict[str, Any]]) -> int:
    return sum(1 + _count(item.get("children", [])) for item in items)


async def list_menus(ctx: Context) -> list[Menu]:
    async with ctx.db.connection() as conn:
        return await store.list_menus(conn)


async def get_menu(ctx: Context, name: str) -> Menu:
    async with ctx.db.connection() as conn:
        row = await store.get_menu(conn, name)
    if row is None:
        raise NotFound(f"no menu {name!r}")
    return row


def _name_taken(name: str) -> Conflict:
    return Conflict(
        f"a menu named {name!r} exists",
        details={"fields": [{"key": "name", "message": "is already in use"}]},
    )


async def create_menu(ctx: Context, actor: Principal, body: dict[str, Any]) -> Menu:
    p = Problems()
    for key in sorted(set(body) - MENU_KEYS):
        p.add(key, "is not a menu property")
    name = body.get("name")
    if not isinstance(name, str) or not MENU_NAME_RE.fullmatch(name):
        p.add("name", "must be lowercase letters, digits, - or _, starting with a letter or digit")
        name = ""
    label = _label(body, name or "menu", p)
    async with write(ctx) as tx:
        items = await check_items(tx.conn, body.get("items", []), p)
        p.raise_if_any()
        try:
            row = await store.insert_menu(tx.conn, short_id(), name, label, items, tx.now)
        except psycopg2.errors.UniqueViolation:
            raise _name_taken(name) from None
        await _changed(tx, actor, "menu.created", row)
    return row


async def put_menu(
    ctx: Context, actor: Principal, name: str, body: dict[str, Any]
) -> tuple[Menu, bool]:
    """Replace the menu's label and items, creating it when missing (True when created)."""
    p = Problems()
    for key in sorted(set(body) - MENU_KEYS):
        p.add(key, "is not a menu property")
    if "name" in body and body["name"] != name:
        p.add("name", "cannot change; create a new menu instead")
    if "items" not in body:
        p.add("items", "is required")
    if not MENU_NAME_RE.fullmatch(name):
        raise NotFound(f"no menu {name!r}")
    async with write(ctx) as tx:
        existing = await store.get_menu(tx.conn, name, lock=True)
        label = _label(body, existing.label if existing else name, p)
        items = await check_items(tx.conn, body.get("items", []), p)
        p.raise_if_any()
        if existing is None:
            try:
                row = await store.insert_menu(tx.conn, short_id(), name, label, items, tx.now)
            except psycopg2.errors.UniqueViolation:
                raise _name_taken(name) from None
            await _changed(tx, actor, "menu.created", row)
            return row, True
        row = await store.update_menu(tx.conn, existing.id, label, items, tx.now)
        await _changed(tx, actor, "menu.updated", row)
    return row, False


async def delete_menu(ctx: Context, actor: Principal, name: str) -> None:
    async with write(ctx) as tx:
        existing = await store.get_menu(tx.conn, name, lock=True)
        if existing is None:
            raise NotFound(f"no menu {name!r}")
        await store.delete_menu(tx.conn, existing.id)
        await _changed(tx, actor, "menu.deleted", existing)
