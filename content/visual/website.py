"""The website manifest, as the host passes it, and ``GET /api/website``.

The manifest names the shared parts of the site an editor changes in place
(spec, "Website manifest"): each part has an id, label, description, the CSS
selector of where it shows, and a source: a menu (with default links), the
entry of a single-kind type (some of its fields), or site settings (some of
them). Parsed once at start; a wrong manifest stops the start listing every
problem. ``GET /api/website`` answers each part with its current value, read
from the source; saving goes through the ordinary menu, entry and settings
routes (docs/content.md, "Website parts").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from common.db import Conn
from content.entries import store as entry_store
from content.entries.serializers import visible_data
from content.menus import store as menu_store
from content.menus.service import MENU_NAME_RE, url_problem
from content.site import store as site_store
from content.site.serializers import settings_json
from content.types import store as type_store
from content.visual.definitions import VisualConfigError, selector_problem

SETTINGS_FIELDS = ("title", "tagline", "description", "logo", "socialImage")
_PART_KEYS = {"id", "label", "description", "selector", "source"}
_SOURCE_KEYS = {
    "menu": {"kind", "name", "label", "defaults"},
    "entry": {"kind", "type", "fields"},
    "settings": {"kind", "fields"},
}


@dataclass(frozen=True)
class Part:
    id: str
    label: str
    description: str
    selector: str
    source: Mapping[str, Any]

    @property
    def kind(self) -> str:
        return str(self.source["kind"])


@dataclass(frozen=True)
class Website:
    preview_url: str
    parts: tuple[Part, ...] = field(default_factory=tuple)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v for v in value)


def _source(raw: Any, where: str, problems: list[str]) -> dict[str, Any]:
    if not isinstance(raw, Mapping) or raw.get("kind") not in _SOURCE_KEYS:
        problems.append(f"{where}.kind must be menu, entry or settings")
        return {"kind": "settings", "fields": []}
    kind = raw["kind"]
    for key in sorted(set(raw) - _SOURCE_KEYS[kind]):
        problems.append(f"{where}.{key} is not a key of a {kind} source")
    if kind == "menu":
        if not isinstance(raw.get("name"), str) or not MENU_NAME_RE.match(raw["name"]):
            problems.append(f"{where}.name must be a menu name (main, footer)")
        defaults = raw.get("defaults", [])
        if not isinstance(defaults, list):
            problems.append(f"{where}.defaults must be a list of {{label, url}}")
            defaults = []
        for i, link in enumerate(defaults):
            ok = isinstance(link, Mapping) and set(link) == {"label", "url"}
            if not ok or not isinstance(link["label"], str) or not link["label"]:
                problems.append(f"{where}.defaults.{i} must be {{label, url}}")
            elif (problem := url_problem(link["url"])) is not None:
                problems.append(f"{where}.defaults.{i}.url {problem}")
        return {
            "kind": kind,
            "name": raw.get("name"),
            "label": raw.get("label") if isinstance(raw.get("label"), str) else raw.get("name"),
            "defaults": [dict(d) for d in defaults if isinstance(d, Mapping)],
        }
    if not _strings(raw.get("fields")):
        problems.append(f"{where}.fields must be a list of field keys")
    fields = list(raw.get("fields") or [])
    if kind == "settings":
        for i, key in enumerate(fields):
            if key not in SETTINGS_FIELDS:
                problems.append(f"{where}.fields.{i} must be one of {', '.join(SETTINGS_FIELDS)}")
        return {"kind": kind, "fields": fields}
    if not isinstance(raw.get("type"), str) or not raw["type"]:
        problems.append(f"{where}.type must name a single-kind content type")
    return {"kind": kind, "type": raw.get("type"), "fields": fields}


def parse_website(raw: Mapping[str, Any] | None) -> Website | None:
    if raw is None:
        return None
    if isinstance(raw, Website):
        return raw
    problems: list[str] = []
    if not isinstance(raw, Mapping):
        raise VisualConfigError("the website option", ["must be an object {previewUrl, parts}"])
    for key in sorted(set(raw) - {"previewUrl", "parts"}):
        problems.append(f"website.{key} is not a known key (known: parts, previewUrl)")
    preview_url = raw.get("previewUrl")
    if not isinstance(preview_url, str) or not preview_url.startswith("/"):
        problems.append("website.previewUrl must be the path of the page previewed (/...)")
    raw_parts = raw.get("parts")
    if not isinstance(raw_parts, list):
        problems.append("website.parts must be a list")
        raw_parts = []
    parts: list[Part] = []
    for i, part in enumerate(raw_parts):
        where = f"website.parts.{i}"
        if not isinstance(part, Mapping):
            problems.append(f"{where} must be an object")
            continue
        for key in sorted(set(part) - _PART_KEYS):
            problems.append(f"{where}.{key} is not a key of a part")
        for key in ("id", "label"):
            if not isinstance(part.get(key), str) or not part[key]:
                problems.append(f"{where}.{key} must be a non-empty string")
        if part.get("id") in {p.id for p in parts}:
            problems.append(f"{where}.id repeats the part id {part.get('id')!r}")
        if (problem := selector_problem(part.get("selector"))) is not None:
            problems.append(f"{where}.selector {problem}")
        description = part.get("description", "")
        if not isinstance(description, str):
            problems.append(f"{where}.description must be a string")
        parts.append(
            Part(
                id=str(part.get("id")),
                label=str(part.get("label")),
                description=description if isinstance(description, str) else "",
                selector=str(part.get("selector")),
                source=_source(part.get("source"), f"{where}.source", problems),
            )
        )
    if problems:
        raise VisualConfigError("the website option", problems)
    return Website(str(preview_url), tuple(parts))


async def startup_problems(conn: Conn, website: Website) -> list[str]:
    """Entry sources need an existing single-kind type with those fields."""
    problems: list[str] = []
    for part in website.parts:
        if part.kind != "entry":
            continue
        ctype = await type_store.get_type(conn, part.source["type"])
        where = f"website part {part.id!r}"
        if ctype is None or not ctype.single:
            problems.append(f"{where}: {part.source['type']!r} is not a single-kind content type")
            continue
        keys = {f["key"] for f in ctype.fields} | {"title"}
        for key in part.source["fields"]:
            if key not in keys:
                problems.append(f"{where}: the type {ctype.name!r} has no field {key!r}")
    return problems


async def _value(conn: Conn, part: Part) -> dict[str, Any]:
    source = part.source
    if part.kind == "menu":
        menu = await menu_store.get_menu(conn, source["name"])
        if menu is None:
            # Not created yet: the editor starts from the defaults; the first
            # save (PUT /api/menus/:name) creates it.
            return {"exists": False, "label": source["label"], "items": source["defaults"]}
        nested = any(item.get("children") for item in menu.items)
        return {"exists": True, "label": menu.label, "items": menu.items, "nested": nested}
    if part.kind == "settings":
        settings = settings_json(await site_store.get_settings(conn))
        return {key: settings[key] for key in source["fields"]}
    ctype = await type_store.get_type(conn, source["type"])
    entry = await entry_store.single_entry(conn, ctype.id) if ctype and ctype.single else None
    if entry is None or ctype is None:
        return {"entry": None}
    data = visible_data(entry.data, ctype.fields)
    fields = {k: entry.title if k == "title" else data.get(k) for k in source["fields"]}
    return {
        "entry": {"id": entry.id, "slug": entry.slug, "status": entry.status},
        "fields": fields,
    }


async def website_json(conn: Conn, website: Website | None) -> dict[str, Any]:
    """The answer of GET /api/website: each part with its source's current value."""
    if website is None:
        return {"previewUrl": None, "parts": []}
    parts = []
    for part in website.parts:
        parts.append(
            {
                "id": part.id,
                "label": part.label,
                "description": part.description,
                "selector": part.selector,
                "source": dict(part.source),
                "value": await _value(conn, part),
            }
        )
    return {"previewUrl": website.preview_url, "parts": parts}
