"""What a visual definition adds to saving (and previewing) an entry of its type.

Called after the type's own field checks (content/entries/validation.py) by
create, update and preview, so each refusal is a 400 VALIDATION_FAILED naming
its key with the other field errors:

* ``data.__layout`` names only the definition's section ids
  (``__layout.order.2``, ``__layout.hidden.0``);
* a formatted field's string keeps only text, ``<i>`` and ``<br>`` (cleaned
  with nh3, as the spec says; nothing is refused);
* a reference field holds the slug of a live entry of the declared type.

At start, :func:`startup_problems` compares each definition with the stored
content types and logs what does not match (the type can be created later
than the host starts, so this warns rather than stops).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from common.db import Conn
from content.entries import store as entry_store
from content.entries.serializers import LAYOUT_KEY
from content.errors import Problems
from content.types import store as type_store
from content.visual.definitions import VisualDefinition
from content.visual.render import clean_formatted

# Field types a click target can edit as a string in the page.
_TEXT_TYPES = {"text", "textarea", "richtext", "markdown", "url", "email", "color"}


def check_layout_sections(
    data: Mapping[str, Any], definition: VisualDefinition, p: Problems
) -> None:
    layout = data.get(LAYOUT_KEY)
    if not isinstance(layout, Mapping):
        return
    known = set(definition.section_ids)
    for name in ("order", "hidden"):
        ids = layout.get(name)
        for i, section_id in enumerate(ids if isinstance(ids, list) else []):
            if isinstance(section_id, str) and section_id not in known:
                p.add(
                    f"{LAYOUT_KEY}.{name}.{i}",
                    f"names {section_id!r}, not a section of this page"
                    f" ({', '.join(sorted(known)) or 'none declared'})",
                )


async def apply_definition(
    conn: Conn, data: dict[str, Any], definition: VisualDefinition | None, p: Problems
) -> dict[str, Any]:
    """``data`` as saved under ``definition`` (formatted fields cleaned); problems added to p."""
    if definition is None:
        return data
    check_layout_sections(data, definition, p)
    out = dict(data)
    for key in definition.formatted:
        if isinstance(out.get(key), str):
            out[key] = clean_formatted(out[key])
    for key, link in definition.references.items():
        slug = out.get(key)
        if slug in (None, ""):
            continue
        if not isinstance(slug, str):
            p.add(key, f"must be the slug of a {link.type} entry")
        elif not await entry_store.live_slugs(conn, link.type, [slug]):
            p.add(key, f"no {link.type} entry has the slug {slug!r}")
    return out


async def startup_problems(conn: Conn, definitions: Mapping[str, VisualDefinition]) -> list[str]:
    """Where the definitions and the stored content types disagree, one line each."""
    problems: list[str] = []
    types = {t.name: t for t in await type_store.list_types(conn)}
    for type_name, definition in definitions.items():
        ctype = types.get(type_name)
        if ctype is None:
            problems.append(f"visual.{type_name}: no content type {type_name!r} exists")
            continue
        field_types = {f["key"]: f["type"] for f in ctype.fields}
        for key in sorted(definition.data_keys()):
            if key not in field_types:
                problems.append(f"visual.{type_name}.fields.{key}: the type has no field {key!r}")
            elif field_types[key] not in _TEXT_TYPES | {"media"}:
                problems.append(
                    f"visual.{type_name}.fields.{key}: a {field_types[key]} field cannot be"
                    " edited in the page"
                )
        for key, link in definition.references.items():
            if field_types.get(key) not in (None, "text"):
                problems.append(
                    f"visual.{type_name}.references.{key}: stores a slug, so must be a text field"
                )
            if link.type not in types:
                problems.append(f"visual.{type_name}.references.{key}: no type {link.type!r}")
        for section in definition.sections:
            if section.collection is not None and section.collection.type not in types:
                problems.append(
                    f"visual.{type_name}.sections.{section.id}.collection: no type"
                    f" {section.collection.type!r}"
                )
    return problems
