"""GET /.well-known/security.txt (RFC 9116)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from aiohttp import web

from common.openapi import operation
from mail.context import MailContext, mail_context

routes = web.RouteTableDef()

# Without SECURITY_TXT_EXPIRES the file always expires this far ahead (RFC 9116
# section 2.5.5 recommends less than a year), at midnight UTC so it is stable all day.
DEFAULT_EXPIRES_IN = timedelta(days=180)


def security_txt(ctx: MailContext) -> str:
    expires = ctx.config.security_expires
    if expires is None:
        day = ctx.clock.now().astimezone(UTC).date() + DEFAULT_EXPIRES_IN
        expires = datetime(day.year, day.month, day.day, tzinfo=UTC)
    lines = [f"Contact: {contact}" for contact in ctx.config.security_contacts]
    lines.append(f"Expires: {expires.astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}")
    if ctx.config.security_policy:
        lines.append(f"Policy: {ctx.config.security_policy}")
    lines.append("Preferred-Languages: en")
    lines.append(f"Canonical: {ctx.settings.public_url}/.well-known/security.txt")
    return "\n".join(lines) + "\n"


@routes.get("/.well-known/security.txt")
@operation(response={"type": "string"}, response_media="text/plain", never=(404,))
async def get_security_txt(request: web.Request) -> web.Response:
    return web.Response(
        text=security_txt(mail_context(request)),
        content_type="text/plain",
        charset="utf-8",
        headers={"Cache-Control": "public, max-age=86400"},
    )
