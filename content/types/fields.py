"""The eighteen field types: options, validation, empty value, editor metadata.

A field definition is a JSON object ``{key, type, label?, required?, help?,
...options}``. Each type declares the options it accepts; :func:`check_definition`
validates a definition (recursively for ``list``), :func:`clean_value`
validates and normalises one value, naming the exact path of any bad input
(``items.2.title``). Reference, media and gallery values are collected while
cleaning and enforced afterwards, each kind in one query, by the entries
service (entries/validation.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any
from urllib.parse import urlsplit

import nh3
from email_validator import EmailNotValidError, validate_email

from content.errors import Problems

FIELD_KEY_RE = re.compile(r"^[a-z][a-zA-Z0-9]{0,63}$")
MEDIA_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
ENTRY_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
COLOR_RE = re.compile(r"^#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
MAX_LIST_DEPTH = 5
MAX_FIELDS = 200
MAX_URL_LENGTH = 2048

# richtext keeps structure and links, never scripts, styles or event handlers.
RICHTEXT_TAGS = {
    "p", "br", "strong", "b", "em", "i", "u", "s", "a", "ul", "ol", "li", "blockquote",
    "h2", "h3", "h4", "h5", "h6", "code", "pre", "hr", "sub", "sup", "span",
    "figure", "figcaption", "img", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
RICHTEXT_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "width", "height"},
    "th": {"colspan", "rowspan"},
    "td": {"colspan", "rowspan"},
}
RICHTEXT_URL_SCHEMES = {"http", "https", "mailto"}

# A field definition as a type stores it ({key, type, label, required, help}
# and the options of its type): JSON checked by check_definitions and
# returned verbatim, so it stays a dict.
FieldDefinition = dict[str, Any]

COMMON_KEYS = {"key", "type", "label", "required", "help"}
# Entry properties: a top-level field with one of these keys would make a
# validation error's key ambiguous.
RESERVED_KEYS = {"id", "type", "title", "slug", "locale", "status", "data", "publishAt"}


@dataclass
class References:
    """Values met while cleaning that name other records.

    ``items``: (path, target type, entry id) of reference fields; ``media``:
    (path, media id) of media fields and gallery items.
    """

    items: list[tuple[str, str, str]] = field(default_factory=list)
    media: list[tuple[str, str]] = field(default_factory=list)


Cleaner = Callable[[Any, FieldDefinition, str, Problems, References], Any]


@dataclass(frozen=True)
class FieldType:
    name: str
    label: str
    editor: str
    description: str
    # option name -> what it means, shown to the admin UI
    options: dict[str, str]
    cleaner: Cleaner
    empty_value: Callable[[FieldDefinition], Any]

    def metadata(self) -> dict[str, Any]:
        return {
            "type": self.name,
            "label": self.label,
            "editor": self.editor,
            "description": self.description,
            "empty": self.empty_value({}),
            "options": {"required": "a value must be given", **self.options},
        }


# --- helpers -------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _length_bounds(value: str, d: FieldDefinition, key: str, problems: Problems) -> None:
    if "minLength" in d and len(value) < d["minLength"] and value:
        problems.add(key, f"must be at least {d['minLength']} characters")
    if "maxLength" in d and len(value) > d["maxLength"]:
        problems.add(key, f"must be at most {d['maxLength']} characters")


def _count_bounds(value: list[Any], d: FieldDefinition, key: str, problems: Problems) -> None:
    if "minItems" in d and len(value) < d["minItems"] and value:
        problems.add(key, f"must have at least {d['minItems']} items")
    if "maxItems" in d and len(value) > d["maxItems"]:
        problems.add(key, f"must have at most {d['maxItems']} items")


def _string(value: Any, key: str, problems: Problems) -> str | None:
    if not isinstance(value, str):
        problems.add(key, "must be a string")
        return None
    return value


def option_values(d: FieldDefinition) -> list[str]:
    return [o["value"] if isinstance(o, dict) else o for o in d.get("options", [])]


# --- cleaners, one per type ----------------------------------------------


def _text(value: Any, d: FieldDefinition, key: str, p: Problems, r: References) -> Any:
    s = _string(value, key, p)
    if s is None:
        return None
    if "\n" in s or "\r" in s:
        p.add(key, "must be a single line")
    _length_bounds(s, {"maxLength": 1000, **d}, key, p)
    return s


def _textarea(value: Any, d: FieldDefinition, key: str, p: Problems, r: References) -> Any:
    s = _string(value, key, p)
    if s is not None:
        _length_bounds(s, {"maxLength": 100_000, **d}, key, p)
    return s


def clean_html(html: str) -> str:
    return nh3.clean(
        html,
        tags=RICHTEXT_TAGS,
        attributes=RICHTEXT_ATTRIBUTES,
        url_schemes=RICHTEXT_URL_SCHEMES,
        link_rel="noopener noreferrer",
    )


def _richtext(value: Any, d: FieldDefinition, key: str, p: Problems, r: References) -> Any:
    s = _string(value, key, p)
    if s is None:
        return None
    cleaned = clean_html(s)
    _length_bounds(cleaned, {"maxLength": 500_000, **d}, key, p)
    return cleaned


def _markdown(value: Any, d: FieldDefinition, key: str, p: Problems, r: References) -> Any:
    s = _string(value, key, p)
    if s is not None:
        _length_bounds(s, {"maxLength": 500_000, **d}, key, p)
    return s


def _number(value: Any, d: FieldDefinition, key: str, p: Problems, r: References) -> Any:
    if not _is_number(value) or not math.isfinite(value):
        p.add(key, "must be a number")
        return None
    if d.get("integer") and value != int(value):
        p.add(key, "must be a whole number")
    if "min" in d and value < d["min"]:
        p.add(key, f"must be at least {d['min']}")
    if "max" in d and value > d["max"]:
        p.add(key, f"must be at most {d['max']}")
    return int(value) if d.get("integer") and value == int(value) else value


def _boolean(value: Any, d: FieldDefinition, key: str, p: Problems, r: References) -> Any:
    if not isinstance(value, bool):
        p.add(key, "must be true or false")
    return value


def _date(value: Any, d: FieldDefinition, key: str, p: Problems, r: References) -> Any:
    s = _string(value, key, p)
    if s is None:
        return None
    try:
        if not DATE_RE.match(s):
            raise ValueError
        return date.fromisoformat(s).isoformat()
    except ValueError:
        p.add(key, "must be a calendar date, YYYY-MM-DD")
        return None


def _datetime(value: Any, d: FieldDefinition, key: str, p: Problems, r: References) -> Any:
    s = _string(value, key, p)
    if s is None:
        return None
    try:
        moment = datetime.fromisoformat(s)
    except ValueError:
        p.add(key, "must be an ISO 8601 date and time")
        return None
    if moment.tzinfo is None:
        p.add(key, "must include a time zone (Z or +hh:mm)")
        return None
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _select(value: Any, d: FieldDefinition, key: str, p: Problems, r: References) -> Any:
    if value not in option_values(d):
        p.add(key, f"must be one of {', '.join(map(str, option_values(d)))}")
    return value


def _multiselect(value: Any, d: FieldDefinition, key: str, p: Problems, r: References) -> Any:
    if not isinstance(value, list):
        p.add(key, "must be a list of options")
        return None
    allowed = option_values(d)
    for i, item in enumerate(value):
        if item not in allowed:
            p.add(f"{key}.{i}", f"must be one of {', '.join(map(str, allowed))}")
    if len(set(map(str, value))) != len(value):
        p.add(key, "must not repeat an option")
    _count_bounds(value, d, key, p)
    return value


def _media(value: Any, d: FieldDefinition, key: str, p: Problems, r: References) -> Any:
    if not isinstance(value, str) or not MEDIA_ID_RE.match(value):
        p.add(key, "must be a media id")
    else:
        r.media.append((key, value))
    return value


def _gallery(value: Any, d: FieldDefinition, key: str, p: Problems, r: References) -> Any:
    if not isinstance(value, list):
        p.add(key, "must be a list of media ids")
        return None
    for i, item in enumerate(value):
        _media(item, d, f"{key}.{i}", p, r)
    _count_bounds(value, d, key, p)
    return value


def _reference(value: Any, d: FieldDefinition, key: str, p: Problems, r: References) -> Any:
    if d.get("multiple"):
        if not isinstance(value, list):
            p.add(key, "must be a list of entry ids")
            return None
        for i, item in enumerate(value):
            _one_reference(item, d, f"{key}.{i}", p, r)
        if len(set(map(str, value))) != len(value):
            p.add(key, "must not repeat an entry")
        _count_bounds(value, d, key, p)
        return value
    _one_reference(value, d, key, p, r)
    return value


def _one_reference(value: Any, d: FieldDefinition, key: str, p: Problems, r: References) -> None:
    if not isinstance(value, str) or not ENTRY_ID_RE.match(value):
        p.add(key, "must be an entry id")
        return
    r.items.append((key, d["to"], value))


def _list(value: Any, d: FieldDefinition, key: str, p: Problems, r: References) -> Any:
    if not isinstance(value, list):
        p.add(key, "must be a list of items")
        return None
    cleaned = []
    for i, item in enumerate(value):
        cleaned.append(clean_object(d["fields"], item, f"{key}.{i}", p, r))
    _count_bounds(value, d, key, p)
    return cleaned


def _json(value: Any, d: FieldDefinition, key: str, p: Problems, r: References) -> Any:
    return value


def _color(value: Any, d: FieldDefinition, key: str, p: Problems, r: References) -> Any:
    s = _string(value, key, p)
    if s is None:
        return None
    if not COLOR_RE.match(s):
        p.add(key, "must be a hex colour such as #1a2b3c")
        return None
    return s.lower()


def _url(value: Any, d: FieldDefinition, key: str, p: Problems, r: References) -> Any:
    s = _string(value, key, p)
    if s is None:
        return None
    try:
        parts = urlsplit(s)
        valid = (
            parts.scheme in ("http", "https")
            and bool(parts.hostname)
            and not any(c.isspace() for c in s)
            and len(s) <= MAX_URL_LENGTH
        )
        _ = parts.port  # a malformed port raises
    except ValueError:
        valid = False
    if not valid:
        p.add(key, "must be an absolute http(s) URL")
    return s


def _email(value: Any, d: FieldDefinition, key: str, p: Problems, r: References) -> Any:
    s = _string(value, key, p)
    if s is None:
        return None
    try:
        return validate_email(s, check_deliverability=False).normalized
    except EmailNotValidError as exc:
        p.add(key, f"must be an email address: {exc}")
        return None


def _const(value: Any) -> Callable[[FieldDefinition], Any]:
    return lambda d: value


def _empty_list(d: FieldDefinition) -> Any:
    return []


def _empty_reference(d: FieldDefinition) -> Any:
    return [] if d.get("multiple") else None


_LENGTH = {"minLength": "shortest allowed length", "maxLength": "longest allowed length"}
_ITEMS = {"minItems": "fewest items", "maxItems": "most items"}

FIELD_TYPES: dict[str, FieldType] = {
    t.name: t
    for t in (
        FieldType("text", "Text", "input", "single line", _LENGTH, _text, _const("")),
        FieldType("textarea", "Long text", "textarea", "plain multi-line text", _LENGTH, _textarea, _const("")),
        FieldType("richtext", "Rich text", "richtext", "formatted writing stored as cleaned HTML", {"maxLength": _LENGTH["maxLength"]}, _richtext, _const("")),
        FieldType("markdown", "Markdown", "markdown", "Markdown source stored as written", {"maxLength": _LENGTH["maxLength"]}, _markdown, _const("")),
        FieldType("number", "Number", "number", "number with optional bounds", {"min": "lowest value", "max": "highest value", "integer": "whole numbers only"}, _number, _const(None)),
        FieldType("boolean", "Yes / no", "toggle", "true or false", {}, _boolean, _const(False)),
        FieldType("date", "Date", "date", "calendar date, YYYY-MM-DD", {}, _date, _const(None)),
        FieldType("datetime", "Date and time", "datetime", "a moment, ISO 8601 with a time zone, stored in UTC", {}, _datetime, _const(None)),
        FieldType("select", "Select", "select", "one of a declared set of options", {"options": "the choices: strings or {value, label}"}, _select, _const(None)),
        FieldType("multiselect", "Multi-select", "checkboxes", "several of the options", {"options": "the choices: strings or {value, label}", **_ITEMS}, _multiselect, _empty_list),
        FieldType("media", "Media", "media-picker", "one image, expanded on delivery", {}, _media, _const(None)),
        FieldType("gallery", "Gallery", "media-picker-multiple", "ordered images, expanded on delivery", _ITEMS, _gallery, _empty_list),
        FieldType("reference", "Reference", "entry-picker", "entries of a declared target type, enforced on save", {"to": "the target content type name", "multiple": "hold a list of entries", **_ITEMS}, _reference, _empty_reference),
        FieldType("list", "List", "repeater", "repeater with its own fields; nests; validated recursively", {"fields": "the field definitions of each item", **_ITEMS}, _list, _empty_list),
        FieldType("json", "JSON", "code", "arbitrary document", {}, _json, _const(None)),
        FieldType("color", "Colour", "color", "hex colour value, stored lowercase", {}, _color, _const("")),
        FieldType("url", "URL", "url", "absolute http(s) URL", {}, _url, _const("")),
        FieldType("email", "Email", "email", "email address, stored normalised", {}, _email, _const("")),
    )
}  # fmt: skip


def empty_value(d: FieldDefinition) -> Any:
    return FIELD_TYPES[d["type"]].empty_value(d)


def is_empty(value: Any, d: FieldDefinition) -> bool:
    """None, or the type's own empty value ("" for strings, [] for lists)."""
    if value is None:
        return True
    empty = empty_value(d)
    if isinstance(empty, str):
        return isinstance(value, str) and value.strip() == ""
    if isinstance(empty, list):
        return isinstance(value, list) and not value
    return False


def clean_value(value: Any, d: FieldDefinition, key: str, p: Problems, r: References) -> Any:
    """Validate one value; the empty value is accepted unless the field is required."""
    if is_empty(value, d):
        if d.get("required"):
            p.add(key, "is required")
        return empty_value(d)
    return FIELD_TYPES[d["type"]].cleaner(value, d, key, p, r)


def clean_object(
    fields: list[FieldDefinition], value: Any, path: str, p: Problems, r: References
) -> dict[str, Any]:
    """Validate an object against field definitions (entry data or a list item)."""
    if not isinstance(value, dict):
        p.add(path, "must be an object")
        return {}
    declared = {d["key"]: d for d in fields}
    prefix = f"{path}." if path else ""
    for key in value:
        if key not in declared:
            p.add(f"{prefix}{key}", "is not a field of this type")
    return {
        key: clean_value(value.get(key), d, f"{prefix}{key}", p, r) for key, d in declared.items()
    }


# --- definitions ---------------------------------------------------------


def _check_int(d: FieldDefinition, name: str, key: str, p: Problems, minimum: int = 0) -> None:
    if name in d and (
        not isinstance(d[name], int) or isinstance(d[name], bool) or d[name] < minimum
    ):
        p.add(f"{key}.{name}", f"must be a whole number of at least {minimum}")


def _check_bool(d: FieldDefinition, name: str, key: str, p: Problems) -> None:
    if name in d and not isinstance(d[name], bool):
        p.add(f"{key}.{name}", "must be true or false")


def _check_options(d: FieldDefinition, key: str, p: Problems) -> None:
    options = d.get("options")
    if not isinstance(options, list) or not options:
        p.add(f"{key}.options", "must be a non-empty list")
        return
    values = []
    for i, option in enumerate(options):
        if isinstance(option, str) and option:
            values.append(option)
        elif (
            isinstance(option, dict)
            and isinstance(option.get("value"), str)
            and option["value"]
            and isinstance(option.get("label", ""), str)
            and set(option) <= {"value", "label"}
        ):
            values.append(option["value"])
        else:
            p.add(f"{key}.options.{i}", "must be a string or {value, label}")
    if len(set(values)) != len(values):
        p.add(f"{key}.options", "must not repeat a value")


def check_definitions(
    fields: Any, path: str, p: Problems, type_names: set[str], depth: int = 0
) -> None:
    """Validate a list of field definitions; keys unique and camelCase at each level."""
    if not isinstance(fields, list):
        p.add(path, "must be a list of field definitions")
        return
    if len(fields) > MAX_FIELDS:
        p.add(path, f"must have at most {MAX_FIELDS} fields")
    seen: set[str] = set()
    for i, d in enumerate(fields):
        key = f"{path}.{i}"
        if not isinstance(d, dict):
            p.add(key, "must be an object")
            continue
        field_key = d.get("key")
        if not isinstance(field_key, str) or not FIELD_KEY_RE.match(field_key):
            p.add(f"{key}.key", "must be camelCase: a lowercase letter, then letters and digits")
        elif depth == 0 and field_key in RESERVED_KEYS:
            p.add(f"{key}.key", f"{field_key} is an entry property; choose another key")
        elif field_key in seen:
            p.add(f"{key}.key", f"repeats the key {field_key}")
        else:
            seen.add(field_key)
        kind = FIELD_TYPES.get(d.get("type"))  # type: ignore[arg-type]
        if kind is None:
            p.add(f"{key}.type", f"must be one of {', '.join(FIELD_TYPES)}")
            continue
        for option in sorted(set(d) - COMMON_KEYS - set(kind.options)):
            p.add(f"{key}.{option}", f"is not an option of {kind.name} fields")
        for name in ("label", "help"):
            if name in d and (not isinstance(d[name], str) or len(d[name]) > 500):
                p.add(f"{key}.{name}", "must be a string of at most 500 characters")
        _check_bool(d, "required", key, p)
        for name in ("minLength", "maxLength", "minItems", "maxItems"):
            _check_int(d, name, key, p)
        for lo, hi in (("minLength", "maxLength"), ("minItems", "maxItems"), ("min", "max")):
            if _is_number(d.get(lo)) and _is_number(d.get(hi)) and d[lo] > d[hi]:
                p.add(f"{key}.{lo}", f"must not be above {hi}")
        for name in ("min", "max"):
            if name in d and (not _is_number(d[name]) or not math.isfinite(d[name])):
                p.add(f"{key}.{name}", "must be a number")
        _check_bool(d, "integer", key, p)
        _check_bool(d, "multiple", key, p)
        if kind.name in ("select", "multiselect"):
            _check_options(d, key, p)
        if kind.name == "reference" and d.get("to") not in type_names:
            p.add(f"{key}.to", "must name an existing content type")
        if kind.name == "list":
            if depth + 1 >= MAX_LIST_DEPTH:
                p.add(f"{key}.fields", f"lists nest at most {MAX_LIST_DEPTH} deep")
            elif not d.get("fields"):
                p.add(f"{key}.fields", "must be a non-empty list of field definitions")
            else:
                check_definitions(d["fields"], f"{key}.fields", p, type_names, depth + 1)


def reference_targets(fields: list[FieldDefinition]) -> set[str]:
    """Every type name a definition refers to, at any depth."""
    found: set[str] = set()
    for d in fields:
        if d.get("type") == "reference":
            found.add(d["to"])
        elif d.get("type") == "list":
            found |= reference_targets(d.get("fields", []))
    return found
