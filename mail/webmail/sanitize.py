"""A message's HTML made safe to show: nh3 (ammonia) on the server, before any browser sees it.

What survives is formatting: no script, style element, form, input, iframe,
object or embed; no event handler attribute; no ``javascript:`` or ``data:``
URL; inline styles only for properties that load nothing (no ``url()``:
``background-image`` and friends are not on the list). Links open in a new
browsing context with ``rel="noopener noreferrer"``.

Images: ``cid:`` sources become the short-lived signed part URLs the caller
makes (a sandboxed frame sends no cookie); remote (http/https) sources are
dropped unless the reader asked for this message's remote content, and
counted, so the reading pane can offer to show them. The page adds the
second and third layers: a sandboxed frame without scripts and its own CSP.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import nh3

TAGS = frozenset(
    {
        "a", "abbr", "address", "b", "bdi", "bdo", "blockquote", "br", "caption", "center",
        "cite", "code", "col", "colgroup", "dd", "del", "details", "dfn", "div", "dl", "dt",
        "em", "figcaption", "figure", "font", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i",
        "img", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "samp", "small", "span",
        "strike", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th",
        "thead", "tr", "tt", "u", "ul", "var",
    }
)  # fmt: skip
# Removed with everything inside them, not just unwrapped.
DROPPED_WITH_CONTENT = frozenset({"script", "style", "title", "head", "noscript", "template"})
_COMMON = {"align", "valign", "dir", "lang", "title", "style", "width", "height", "bgcolor"}
ATTRIBUTES = {
    "*": _COMMON,
    "a": {"href", "name"},
    "img": {"src", "alt", "border"},
    "table": {"border", "cellpadding", "cellspacing"},
    "td": {"colspan", "rowspan", "nowrap"},
    "th": {"colspan", "rowspan", "nowrap", "scope"},
    "font": {"color", "face", "size"},
    "col": {"span"},
    "colgroup": {"span"},
    "ol": {"start", "type"},
    "li": {"value"},
}
# Properties that draw but load nothing (ammonia drops the others).
STYLE_PROPERTIES = frozenset(
    {
        "color", "background-color", "font", "font-family", "font-size", "font-style",
        "font-weight", "text-align", "text-decoration", "text-indent", "text-transform",
        "line-height", "letter-spacing", "white-space", "word-break", "vertical-align",
        "margin", "margin-top", "margin-right", "margin-bottom", "margin-left", "padding",
        "padding-top", "padding-right", "padding-bottom", "padding-left", "border",
        "border-top", "border-right", "border-bottom", "border-left", "border-color",
        "border-style", "border-width", "border-collapse", "border-spacing", "border-radius",
        "width", "max-width", "min-width", "height", "max-height", "min-height", "display",
        "list-style-type", "table-layout",
    }
)  # fmt: skip
URL_SCHEMES = frozenset({"http", "https", "mailto", "cid"})


@dataclass(frozen=True)
class Sanitised:
    html: str
    # Remote images removed because the reader has not asked for them.
    blocked_remote: int


def sanitise(html: str, cid_url: Callable[[str], str | None], *, allow_remote: bool) -> Sanitised:
    """``html`` with only safe formatting; ``cid_url(content_id)`` names the signed part URL."""
    blocked = 0

    def attribute(tag: str, name: str, value: str) -> str | None:
        nonlocal blocked
        if tag == "img" and name == "src":
            src = value.strip()
            lower = src.lower()
            if lower.startswith("cid:"):
                return cid_url(src[4:].strip().strip("<>"))
            if lower.startswith(("http:", "https:", "//")):
                if allow_remote and not lower.startswith("//"):
                    return src
                blocked += 1
            return None
        if tag == "a" and name == "href" and value.strip().lower().startswith("cid:"):
            return None
        return value

    cleaned = nh3.clean(
        html,
        tags=set(TAGS),
        clean_content_tags=set(DROPPED_WITH_CONTENT),
        attributes={k: set(v) for k, v in ATTRIBUTES.items()},
        attribute_filter=attribute,
        url_schemes=set(URL_SCHEMES),
        link_rel="noopener noreferrer",
        set_tag_attribute_values={"a": {"target": "_blank"}},
        filter_style_properties=set(STYLE_PROPERTIES),
        strip_comments=True,
    )
    return Sanitised(html=cleaned, blocked_remote=blocked)
