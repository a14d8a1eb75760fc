"""``render_visual(html, definition, layout, editing=False)``: the host's page, arranged.

The page is parsed with lxml (never matched with regular expressions), so
markup the host writes in any style is moved as elements, text and all:

* Declared sections that are siblings (the same parent element) are put in
  ``layout.order``: the movable ones named there first, in that order, then
  the other movable ones as the page has them. They take the places movable
  sections held, so a section declared ``movable: false`` never moves.
* Sections in ``layout.hidden`` are removed from the public page. In editing
  mode they stay, marked ``data-visual-hidden="true"``, so an editor can
  bring them back.
* In editing mode sections and fields get the selection attributes the admin's
  overlay reads (``data-visual-section``, ``data-visual-field`` ... listed in
  docs/content.md, "Visual editing"); the public page has none, even if the
  host's template wrote some.
* In editing mode the admin's overlay (a script and a sheet the CMS serves,
  never the site's code) is linked at the end of the head when given: it
  outlines what can be selected and talks to the admin by postMessage
  (docs/content.md, "Visual preview in the admin").

Section ids in the layout that the definition does not declare are ignored
here; saving or previewing such a layout is refused (content/visual/checks.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import nh3
from lxml import etree
from lxml import html as lxml_html
from lxml.cssselect import CSSSelector

from content.visual.definitions import VisualDefinition, parse_definition

ATTRIBUTE_PREFIX = "data-visual-"
# What a formatted field's stored string may hold (spec): text, i and br.
FORMATTED_TAGS = {"i", "br"}


def clean_formatted(value: str) -> str:
    """A formatted field's value as stored: text, ``<i>`` and ``<br>``; the rest goes."""
    return nh3.clean(value, tags=FORMATTED_TAGS, attributes={}, link_rel=None)


def _layout_ids(layout: Mapping[str, Any] | None, key: str) -> list[str]:
    ids = (layout or {}).get(key) or []
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []


def _parse(page: str) -> tuple[Any, bool]:
    """The page's root element, and whether it is a whole document."""
    start = page.lstrip()[:9].lower()
    if start.startswith("<!doctype") or start.startswith("<html"):
        return lxml_html.document_fromstring(page), True
    return lxml_html.fragment_fromstring(page, create_parent="div"), False


def _serialize(root: Any, whole: bool) -> str:
    if whole:
        tree = root.getroottree()
        doctype = tree.docinfo.doctype or None
        return str(etree.tostring(tree, method="html", encoding="unicode", doctype=doctype))
    inner = root.text or ""
    return inner + "".join(
        etree.tostring(child, method="html", encoding="unicode") for child in root
    )


@lru_cache(maxsize=1024)
def _compiled(selector: str) -> CSSSelector:
    return CSSSelector(selector)


def _first(root: Any, selector: str) -> Any | None:
    found = _compiled(selector)(root)
    return found[0] if found else None


def _reorder(definition: VisualDefinition, found: dict[str, Any], order: list[str]) -> None:
    """Move movable sibling sections into ``order``; immovable ones keep their place."""
    by_parent: dict[Any, list[tuple[str, Any]]] = {}
    for section in definition.sections:
        element = found.get(section.id)
        if element is None or not section.movable or element.getparent() is None:
            continue
        by_parent.setdefault(element.getparent(), []).append((section.id, element))
    rank = {section_id: n for n, section_id in enumerate(order)}
    for parent, members in by_parent.items():
        slots = sorted(members, key=lambda m: parent.index(m[1]))
        wanted = sorted(
            slots, key=lambda m: (0, rank[m[0]]) if m[0] in rank else (1, parent.index(m[1]))
        )
        if wanted == slots:
            continue
        # Each slot keeps the text after it (its tail); the sections move between slots.
        marks = []
        for _, element in slots:
            mark = etree.Comment("visual-slot")
            mark.tail, element.tail = element.tail, None
            parent.replace(element, mark)
            marks.append(mark)
        for mark, (_, element) in zip(marks, wanted, strict=True):
            element.tail = mark.tail
            parent.replace(mark, element)


_MARKED = etree.XPath(f"descendant-or-self::*[@*[starts-with(name(), '{ATTRIBUTE_PREFIX}')]]")


def _strip_marks(root: Any) -> None:
    for element in _MARKED(root):
        for name in [a for a in element.attrib if a.startswith(ATTRIBUTE_PREFIX)]:
            del element.attrib[name]


def _mark(root: Any, definition: VisualDefinition, found: dict[str, Any], hidden: set[str]) -> None:
    for section in definition.sections:
        element = found.get(section.id)
        if element is None:
            continue
        element.set("data-visual-section", section.id)
        element.set("data-visual-label", section.label)
        if section.fields:
            element.set("data-visual-fields", " ".join(section.fields))
        if not section.movable:
            element.set("data-visual-movable", "false")
        if section.collection is not None:
            element.set("data-visual-collection", section.collection.type)
            element.set("data-visual-collection-label", section.collection.label)
        if section.id in hidden:
            element.set("data-visual-hidden", "true")
    for key, selector in definition.fields.items():
        reference = definition.references.get(key)
        for element in _compiled(selector)(root):
            element.set("data-visual-field", key)
            if reference is not None:
                element.set("data-visual-reference", reference.type)
                element.set("data-visual-reference-label", reference.label)
            if key in definition.formatted:
                element.set("data-visual-formatted", "true")


@dataclass(frozen=True)
class Overlay:
    """The admin's overlay files, absolute URLs on the CMS's origin (PUBLIC_URL)."""

    script: str
    stylesheet: str


def _add_overlay(root: Any, whole: bool, overlay: Overlay) -> None:
    """The overlay's sheet and script at the end of the head (or of a fragment).

    A classic deferred script, so it loads in the admin's sandboxed frame,
    whose origin is opaque (a module script would need CORS)."""
    head = root.find("head") if whole else None
    target = head if head is not None else root
    link = etree.SubElement(target, "link")
    link.set("rel", "stylesheet")
    link.set("href", overlay.stylesheet)
    script = etree.SubElement(target, "script")
    script.set("src", overlay.script)
    script.set("defer", "")


def render_visual(
    html: str,
    definition: VisualDefinition | Mapping[str, Any],
    layout: Mapping[str, Any] | None,
    editing: bool = False,
    overlay: Overlay | None = None,
) -> str:
    """The page arranged by ``layout`` (an entry's ``data.__layout``); see the module.

    ``overlay``, in editing mode, adds the admin's overlay (``ContentService.
    render_visual`` passes its own)."""
    definition = parse_definition(definition)
    root, whole = _parse(html)
    _strip_marks(root)
    # Each section's element, found once: moving an element keeps it the same.
    found = {s.id: _first(root, s.selector) for s in definition.sections}
    _reorder(definition, found, _layout_ids(layout, "order"))
    hidden = set(_layout_ids(layout, "hidden"))
    if editing:
        _mark(root, definition, found, hidden)
        if overlay is not None:
            _add_overlay(root, whole, overlay)
    else:
        for section_id in hidden:
            element = found.get(section_id)
            if element is not None and element.getparent() is not None:
                element.drop_tree()  # keeps the text after it
    return _serialize(root, whole)
