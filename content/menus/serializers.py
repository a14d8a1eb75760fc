"""The JSON shape of a menu as the admin reads it: the tree as saved."""

from __future__ import annotations

from typing import Any

from content.menus.store import Menu


def menu_json(menu: Menu) -> dict[str, Any]:
    return {
        "name": menu.name,
        "label": menu.label,
        "items": menu.items,
        "createdAt": menu.created_at,
        "updatedAt": menu.updated_at,
    }
