"""The base of the typed row records, one convention for content, mail and mta.

Each store defines its rows as frozen dataclasses deriving from
:class:`Record` (``Person`` in content/people/store.py, ``Domain`` in
mail/domains/store.py, ``Filter`` in mta/store/filters.py ...) and builds them
from the row it fetched, so the services and the serializers read attributes
mypy checks instead of ``dict[str, Any]`` keys. A field is filled from the
column of the same name; a column the record does not name is ignored, so a
``SELECT *`` can grow without touching the record.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Self


class Record:
    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Self:
        names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
        return cls(**{name: row[name] for name in names})

    @classmethod
    def from_optional(cls, row: Mapping[str, Any] | None) -> Self | None:
        """None for no row (a lookup that found nothing)."""
        return None if row is None else cls.from_row(row)
