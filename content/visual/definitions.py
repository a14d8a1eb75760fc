"""Visual page definitions, as the host passes them: parsed and checked once, at start.

A definition is keyed by content-type name (spec, "Visual page definition"):
``sections`` (id, label, selector, fields, optional movable and collection),
``fields`` (field key to CSS selector, ``$title`` for the entry title),
optional ``references`` (field key to ``{type, label}``) and ``formatted``
(field keys holding inline HTML). Anything wrong (an unknown key, a selector
that does not parse, a repeated section id, a section naming a field the
definition does not declare) stops the start with every problem listed, so a
typo never silently disables a click target.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cssselect import GenericTranslator, SelectorError

from common.settings import SettingsError

TITLE = "$title"
# Section ids go into data.__layout and HTML attributes: keep them plain.
_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
_TYPE_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
_DEFINITION_KEYS = {"sections", "fields", "references", "formatted"}
_SECTION_KEYS = {"id", "label", "selector", "fields", "movable", "collection"}
_LINK_KEYS = {"type", "label"}


class VisualConfigError(SettingsError, ValueError):
    """The host's visual or website options are wrong; the message lists every problem.

    A SettingsError, so the gateway refuses to start with the message alone
    (gateway/main.py), as for a bad environment variable."""

    def __init__(self, what: str, problems: list[str]) -> None:
        super().__init__(f"{what} is invalid:\n  " + "\n  ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Link:
    """A collection or reference: the content type it points at, and its label."""

    type: str
    label: str


@dataclass(frozen=True)
class Section:
    id: str
    label: str
    selector: str
    fields: tuple[str, ...] = ()
    movable: bool = True
    collection: Link | None = None


@dataclass(frozen=True)
class VisualDefinition:
    sections: tuple[Section, ...] = ()
    fields: Mapping[str, str] = field(default_factory=dict)
    references: Mapping[str, Link] = field(default_factory=dict)
    formatted: tuple[str, ...] = ()

    @property
    def section_ids(self) -> tuple[str, ...]:
        return tuple(s.id for s in self.sections)

    def section(self, section_id: str) -> Section | None:
        return next((s for s in self.sections if s.id == section_id), None)

    def data_keys(self) -> set[str]:
        """The entry data keys this definition edits (``$title`` is the entry's title)."""
        return set(self.fields) - {TITLE}


def selector_problem(selector: Any) -> str | None:
    """Why ``selector`` is not a CSS selector lxml can run, or None."""
    if not isinstance(selector, str) or not selector.strip():
        return "must be a CSS selector"
    try:
        GenericTranslator().css_to_xpath(selector)
    except SelectorError as exc:
        return f"is not a valid CSS selector ({exc})"
    return None


class _Checker:
    def __init__(self) -> None:
        self.problems: list[str] = []

    def add(self, where: str, message: str) -> None:
        self.problems.append(f"{where} {message}")

    def text(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not value.strip():
            self.add(where, "must be a non-empty string")
            return ""
        return value

    def unknown(self, raw: Mapping[str, Any], allowed: set[str], where: str) -> None:
        for key in sorted(set(raw) - allowed):
            self.add(f"{where}.{key}", f"is not a known key (known: {', '.join(sorted(allowed))})")

    def link(self, raw: Any, where: str) -> Link | None:
        if not isinstance(raw, Mapping):
            self.add(where, "must be an object {type, label}")
            return None
        self.unknown(raw, _LINK_KEYS, where)
        type_name = self.text(raw.get("type"), f"{where}.type")
        if type_name and not _TYPE_NAME.match(type_name):
            self.add(f"{where}.type", "must be a content type name")
        return Link(type_name, self.text(raw.get("label"), f"{where}.label"))

    def selector(self, value: Any, where: str) -> str:
        problem = selector_problem(value)
        if problem:
            self.add(where, problem)
            return ""
        return str(value)


def _section(c: _Checker, raw: Any, where: str, field_keys: set[str]) -> Section | None:
    if not isinstance(raw, Mapping):
        c.add(where, "must be an object")
        return None
    c.unknown(raw, _SECTION_KEYS, where)
    section_id = c.text(raw.get("id"), f"{where}.id")
    if section_id and not _ID.match(section_id):
        c.add(f"{where}.id", "must be a letter then letters, digits, - or _ (at most 64)")
    fields = raw.get("fields", [])
    if not isinstance(fields, list) or not all(isinstance(f, str) for f in fields):
        c.add(f"{where}.fields", "must be a list of field keys")
        fields = []
    for i, key in enumerate(fields):
        if key not in field_keys:
            c.add(f"{where}.fields.{i}", f"names {key!r}, which the definition's fields do not")
    movable = raw.get("movable", True)
    if not isinstance(movable, bool):
        c.add(f"{where}.movable", "must be true or false")
    collection = None
    if raw.get("collection") is not None:
        collection = c.link(raw["collection"], f"{where}.collection")
    return Section(
        id=section_id,
        label=c.text(raw.get("label"), f"{where}.label"),
        selector=c.selector(raw.get("selector"), f"{where}.selector"),
        fields=tuple(fields),
        movable=movable is not False,
        collection=collection,
    )


def _definition(c: _Checker, raw: Any, where: str) -> VisualDefinition:
    if not isinstance(raw, Mapping):
        c.add(where, "must be an object")
        return VisualDefinition()
    c.unknown(raw, _DEFINITION_KEYS, where)
    fields: dict[str, str] = {}
    raw_fields = raw.get("fields", {})
    if not isinstance(raw_fields, Mapping):
        c.add(f"{where}.fields", "must map field keys to CSS selectors")
        raw_fields = {}
    for key, selector in raw_fields.items():
        fields[str(key)] = c.selector(selector, f"{where}.fields.{key}")
    raw_sections = raw.get("sections", [])
    if not isinstance(raw_sections, list):
        c.add(f"{where}.sections", "must be a list")
        raw_sections = []
    sections: list[Section] = []
    seen: set[str] = set()
    for i, raw_section in enumerate(raw_sections):
        section = _section(c, raw_section, f"{where}.sections.{i}", set(fields))
        if section is None:
            continue
        if section.id in seen:
            c.add(f"{where}.sections.{i}.id", f"repeats the section id {section.id!r}")
        seen.add(section.id)
        sections.append(section)
    references: dict[str, Link] = {}
    raw_refs = raw.get("references", {})
    if not isinstance(raw_refs, Mapping):
        c.add(f"{where}.references", "must map field keys to {type, label}")
        raw_refs = {}
    for key, link in raw_refs.items():
        if key not in fields or key == TITLE:
            c.add(f"{where}.references.{key}", "must be one of the definition's fields")
        found = c.link(link, f"{where}.references.{key}")
        if found is not None:
            references[str(key)] = found
    formatted = raw.get("formatted", [])
    if not isinstance(formatted, list) or not all(isinstance(f, str) for f in formatted):
        c.add(f"{where}.formatted", "must be a list of field keys")
        formatted = []
    for i, key in enumerate(formatted):
        if key not in fields or key == TITLE:
            c.add(f"{where}.formatted.{i}", f"names {key!r}, which the definition's fields do not")
        elif key in references:
            c.add(f"{where}.formatted.{i}", f"{key!r} is a reference, not formatted text")
    return VisualDefinition(
        sections=tuple(sections),
        fields=fields,
        references=references,
        formatted=tuple(formatted),
    )


def parse_definition(raw: Any, where: str = "definition") -> VisualDefinition:
    """One definition (render_visual takes one as it is written, too)."""
    if isinstance(raw, VisualDefinition):
        return raw
    c = _Checker()
    definition = _definition(c, raw, where)
    if c.problems:
        raise VisualConfigError(f"the visual {where}", c.problems)
    return definition


def parse_definitions(raw: Mapping[str, Any] | None) -> dict[str, VisualDefinition]:
    """The ``visual`` option: definitions keyed by content-type name, every problem at once."""
    if raw is None:
        return {}
    c = _Checker()
    if not isinstance(raw, Mapping):
        raise VisualConfigError("the visual option", ["must map content-type names to definitions"])
    out: dict[str, VisualDefinition] = {}
    for type_name, definition in raw.items():
        where = f"visual.{type_name}"
        if not isinstance(type_name, str) or not _TYPE_NAME.match(type_name):
            c.add(where, "must be keyed by a content type name")
        out[str(type_name)] = (
            definition
            if isinstance(definition, VisualDefinition)
            else _definition(c, definition, where)
        )
    if c.problems:
        raise VisualConfigError("the visual option", c.problems)
    return out
