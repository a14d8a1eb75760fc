"""Design surfaces: what the host or a plugin lets editors restyle, and the value rules.

A :class:`Surface` is a part of the site (the header, the body text, a
plugin's gallery) with typed :class:`Property` declarations. Three property
types exist; each value is checked here, strictly, because the site writes it
into CSS (:func:`css`):

- ``color``: a hex colour (``#1a2b3c``, ``#abc``, with alpha ``#1a2b3c80``),
  stored lowercase, the rule of the colour field type;
- ``font``: a CSS font-family list (``"Source Serif 4", Georgia, serif``):
  family names of letters, digits, spaces and hyphens, quoted or not;
- ``spacing``: one to four CSS lengths (``0``, ``1.5rem``, ``8px 16px``) in
  px, rem, em, %, vw, vh or ch, none negative.

A property may list ``options``: then only those values are accepted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from content.types.fields import COLOR_RE

PROPERTY_TYPES = ("color", "font", "spacing")
# Surface ids: a host surface is `header`; a plugin's is `<plugin>.<id>`.
SURFACE_ID_RE = re.compile(r"^[a-z][a-z0-9-]{0,62}$")
PROPERTY_KEY_RE = re.compile(r"^[a-z][A-Za-z0-9]{0,62}$")
MAX_FONT_LENGTH = 200
_FAMILY_RE = re.compile(
    r'^(?:"[A-Za-z0-9 -]{1,60}"|\'[A-Za-z0-9 -]{1,60}\'|[A-Za-z][A-Za-z0-9 -]{0,59})$'
)
_LENGTH_RE = re.compile(r"^(?:0|(?:\d{1,4}(?:\.\d{1,3})?|\.\d{1,3})(?:px|rem|em|%|vw|vh|ch))$")
# A selector is the host's own code, not user input; only what cannot end the rule.
_SELECTOR_BAD = re.compile(r"[{};<>]")


class DeclarationError(ValueError):
    """A surface declared wrongly: reported at start, naming the surface and property."""


@dataclass(frozen=True)
class Property:
    key: str
    type: str
    label: str = ""
    default: str | None = None
    options: Sequence[str] = ()
    description: str = ""


@dataclass(frozen=True)
class Surface:
    id: str
    label: str
    properties: Sequence[Property]
    # Where the site applies the values as CSS custom properties (see css()).
    selector: str = ":root"
    description: str = ""
    # Set by the registry: "host", or the name of the plugin that declares it.
    source: str = field(default="host", compare=False)


def check_value(prop: Property, value: object) -> tuple[str | None, str | None]:
    """(clean value, None) or (None, why the value is refused)."""
    if not isinstance(value, str):
        return None, f"must be a {prop.type} value as a string"
    text = value.strip()
    if prop.type == "color":
        if not COLOR_RE.match(text):
            return None, "must be a hex colour such as #1a2b3c"
        text = text.lower()
    elif prop.type == "font":
        families = [part.strip() for part in text.split(",")]
        if len(text) > MAX_FONT_LENGTH or not all(_FAMILY_RE.match(f) for f in families):
            return None, (
                'must be a font-family list such as "Source Serif 4", Georgia, serif '
                f"(at most {MAX_FONT_LENGTH} characters)"
            )
        text = ", ".join(families)
    elif prop.type == "spacing":
        parts = text.split()
        if not 1 <= len(parts) <= 4 or not all(_LENGTH_RE.match(p) for p in parts):
            return (
                None,
                "must be one to four lengths such as 1rem or 8px 16px (px, rem, em, %, vw, vh, ch)",
            )
        text = " ".join(parts)
    if prop.options and text not in prop.options:
        return None, f"must be one of {', '.join(prop.options)}"
    return text, None


def check_surface(surface: Surface, *, source: str = "host") -> Surface:
    """The surface as declared, or DeclarationError naming what is wrong.

    A plugin's surface ids are prefixed with its name (`gallery.frame`), so
    no plugin can take the host's or another plugin's surface.
    """
    where = f"design surface {surface.id!r}"
    if not isinstance(surface.id, str) or not SURFACE_ID_RE.match(surface.id):
        raise DeclarationError(f"{where}: the id must match {SURFACE_ID_RE.pattern}")
    if (
        not isinstance(surface.selector, str)
        or not surface.selector.strip()
        or _SELECTOR_BAD.search(surface.selector)
    ):
        raise DeclarationError(f"{where}: the selector must be a CSS selector")
    if not surface.properties:
        raise DeclarationError(f"{where}: declares no properties")
    seen: set[str] = set()
    for prop in surface.properties:
        if not isinstance(prop, Property):
            raise DeclarationError(f"{where}: properties are content.design.Property")
        if not PROPERTY_KEY_RE.match(prop.key) or prop.key in seen:
            raise DeclarationError(
                f"{where}: property key {prop.key!r} is not a unique camelCase key"
            )
        seen.add(prop.key)
        if prop.type not in PROPERTY_TYPES:
            raise DeclarationError(
                f"{where}: property {prop.key!r} has type {prop.type!r}; "
                f"types are {', '.join(PROPERTY_TYPES)}"
            )
        for option in prop.options:
            if check_value(Property(prop.key, prop.type), option)[1] is not None:
                raise DeclarationError(
                    f"{where}: option {option!r} of {prop.key!r} is not a {prop.type}"
                )
        if prop.default is not None:
            _, problem = check_value(prop, prop.default)
            if problem is not None:
                raise DeclarationError(f"{where}: the default of {prop.key!r} {problem}")
    return Surface(
        id=surface.id if source == "host" else f"{source}.{surface.id}",
        label=surface.label or surface.id,
        properties=tuple(surface.properties),
        selector=surface.selector.strip(),
        description=surface.description,
        source=source,
    )


def check_surfaces(surfaces: Iterable[Surface], *, source: str = "host") -> list[Surface]:
    out: list[Surface] = []
    for surface in surfaces:
        if not isinstance(surface, Surface):
            raise DeclarationError("design surfaces are content.design.Surface")
        checked = check_surface(surface, source=source)
        if any(s.id == checked.id for s in out):
            raise DeclarationError(f"design surface {checked.id!r} is declared twice")
        out.append(checked)
    return out


def css_variable(surface_id: str, key: str) -> str:
    """`--header-background` for surface `header`, property `background`."""
    kebab = re.sub(r"([A-Z])", lambda m: "-" + m.group(1).lower(), key)
    return f"--{surface_id.replace('.', '-')}-{kebab}"


def css(values: Sequence[tuple[Surface, dict[str, str]]]) -> str:
    """The effective values as CSS custom properties, one rule per surface selector."""
    rules = []
    for surface, props in values:
        if props:
            body = "; ".join(f"{css_variable(surface.id, k)}: {v}" for k, v in props.items())
            rules.append(f"{surface.selector} {{ {body} }}")
    return "\n".join(rules)
