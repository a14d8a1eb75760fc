"""The example site's content model: what it declares to the CMS, and its seed.

Four content types: ``page`` (the visual one), ``feature`` (shared records a
page's collection section lists), ``person`` (what a page's ``author`` field
references by slug) and ``footer`` (single-kind, a shared website part).
"""

from __future__ import annotations

from typing import Any

from content.options import ContentOptions

PREFIX = "/site"

VISUAL: dict[str, Any] = {
    "page": {
        "sections": [
            {
                "id": "hero",
                "label": "Hero",
                "selector": "#hero",
                "fields": ["$title", "intro"],
                # The page's heading stays first whatever the layout says.
                "movable": False,
            },
            {
                "id": "features",
                "label": "Features",
                "selector": "#features",
                "fields": [],
                "collection": {"type": "feature", "label": "Features"},
            },
            {
                "id": "story",
                "label": "Story",
                "selector": "#story",
                "fields": ["body", "author"],
            },
            {"id": "contact", "label": "Contact", "selector": "#contact", "fields": ["cta"]},
        ],
        "fields": {
            "$title": "#hero h1",
            "intro": "#hero .intro",
            "body": "#story .body",
            "author": "#story .author",
            "cta": "#contact .cta",
        },
        "references": {"author": {"type": "person", "label": "Author"}},
        "formatted": ["intro"],
    }
}

WEBSITE: dict[str, Any] = {
    "previewUrl": f"{PREFIX}/",
    "parts": [
        {
            "id": "navigation",
            "label": "Main menu",
            "description": "The links at the top of every page",
            "selector": "#main-nav",
            "source": {
                "kind": "menu",
                "name": "main",
                "label": "Main menu",
                "defaults": [
                    {"label": "Home", "url": f"{PREFIX}/"},
                    {"label": "About", "url": f"{PREFIX}/about"},
                ],
            },
        },
        {
            "id": "identity",
            "label": "Site name",
            "description": "The name and tagline in the header",
            "selector": "#site-header .brand",
            "source": {"kind": "settings", "fields": ["title", "tagline"]},
        },
        {
            "id": "footer",
            "label": "Footer",
            "description": "The note at the bottom of every page",
            "selector": "#site-footer",
            "source": {"kind": "entry", "type": "footer", "fields": ["text"]},
        },
    ],
}

OPTIONS = ContentOptions(visual=VISUAL, website=WEBSITE)

TYPES: list[dict[str, Any]] = [
    {"name": "person", "label": "People", "fields": [{"key": "role", "type": "text"}]},
    {
        "name": "feature",
        "label": "Features",
        "fields": [{"key": "summary", "type": "text", "maxLength": 300}],
    },
    {
        "name": "page",
        "label": "Pages",
        "previewUrl": f"{PREFIX}/{{slug}}",
        "fields": [
            {"key": "intro", "type": "text", "maxLength": 500},
            {"key": "body", "type": "textarea"},
            {"key": "author", "type": "text"},
            {"key": "cta", "type": "text"},
        ],
    },
    {
        "name": "footer",
        "label": "Footer",
        "single": True,
        "fields": [{"key": "text", "type": "text"}],
    },
]

# (type, title, slug, data), created published in this order (references first).
ENTRIES: list[tuple[str, str, str, dict[str, Any]]] = [
    ("person", "Ada Lovelace", "ada", {"role": "Editor"}),
    (
        "feature",
        "Fast pages",
        "fast",
        {"summary": "Served from the delivery API, cached by version."},
    ),
    (
        "feature",
        "Visual editing",
        "visual",
        {"summary": "Click a heading in the preview to edit it."},
    ),
    (
        "page",
        "Welcome",
        "home",
        {
            "intro": "A small site on the <i>content</i> service.<br>Edit it in the preview.",
            "body": "Every section of this page is declared to the CMS.",
            "author": "ada",
            "cta": "Write to hello@example.com",
        },
    ),
    (
        "page",
        "About",
        "about",
        {
            "intro": "Who we are.",
            "body": "This page hides its features section.",
            "author": "ada",
            "cta": "Say hello",
            "__layout": {"order": ["story", "contact"], "hidden": ["features"]},
        },
    ),
    ("footer", "Footer", "footer", {"text": "Made with the content service."}),
]
