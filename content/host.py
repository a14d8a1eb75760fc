"""What a host's pages read in process: the delivery API's answers, without HTTP.

``ContentService.reader()`` returns a :class:`SiteReader`: the same functions
the delivery routes answer with (content/delivery/service.py), for every type
(a host reads its own site), so a page gets exactly what a delivery key
would: published content only, media and references expanded. ``None`` stands
for the delivery API's 404. ``preview(token)`` is the spec's preview rule: the
snapshot a live token holds, at any status, or None for a missing, expired or
forged token, which the host then renders as the public page.
"""

from __future__ import annotations

from typing import Any

from content.context import Context
from content.delivery import service as delivery
from content.errors import NotFound
from content.http import Paging

EVERY_TYPE = ("*",)


class SiteReader:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    async def entry(self, type_name: str, slug: str) -> dict[str, Any] | None:
        async with self.ctx.db.connection() as conn:
            try:
                return await delivery.entry(conn, EVERY_TYPE, type_name, slug, None, ())
            except NotFound:
                return None

    async def single(self, type_name: str) -> dict[str, Any] | None:
        async with self.ctx.db.connection() as conn:
            try:
                return await delivery.single(conn, EVERY_TYPE, type_name, ())
            except NotFound:
                return None

    async def entries(
        self, type_name: str, *, limit: int = 100, sort: tuple[str, bool] = ("publishedAt", True)
    ) -> list[dict[str, Any]]:
        """The first ``limit`` published entries; ``sort`` is (field, descending)."""
        query = delivery.ListQuery(paging=Paging(page=1, limit=limit), sort=sort)
        async with self.ctx.db.connection() as conn:
            try:
                page = await delivery.entries(conn, EVERY_TYPE, type_name, query)
            except NotFound:
                return []
        return list(page["data"])

    async def menu(self, name: str) -> dict[str, Any] | None:
        async with self.ctx.db.connection() as conn:
            try:
                return await delivery.menu(conn, EVERY_TYPE, name)
            except NotFound:
                return None

    async def settings(self) -> dict[str, Any]:
        async with self.ctx.db.connection() as conn:
            return await delivery.settings(conn)

    async def preview(self, token: str) -> dict[str, Any] | None:
        """The entry a live preview token shows (with ``status``), or None."""
        try:
            return await delivery.preview(self.ctx, EVERY_TYPE, token)
        except NotFound:
            return None
