"""The JSON shape of a person."""

from __future__ import annotations

from typing import Any

from content.people.store import Person


def user_json(person: Person) -> dict[str, Any]:
    return {
        "id": person.id,
        "email": person.email,
        "name": person.name,
        "role": person.role,
        "createdAt": person.created_at,
        "updatedAt": person.updated_at,
    }
