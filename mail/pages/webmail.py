"""The webmail at /webmail: one shell page, and the reading frame of one message.

The shell is a page like the panel's (strict CSP, one ES module, no
third-party origin) driving /api/mail with the svc_webmail cookie; it shows
the sign-in form itself when /api/mail/me answers 401, so a mailbox owner
who is no panel user never meets the panel.

``/webmail/frame/{message_id}`` is what the reading pane's sandboxed
``<iframe>`` loads: the body as sanitised on the server (mail/webmail/
sanitize.py), in a document whose own CSP makes it an opaque origin
(``sandbox``), runs nothing (no script-src, default-src 'none'), draws
images only from this origin's signed part URLs (and https: when the reader
asked for this message's remote content), and may only be framed here. It
is reached with the cookie (the frame's navigation is the page's); the
images inside it are requested by an opaque origin, which sends no
SameSite cookie, hence the signed URLs.
"""

from __future__ import annotations

import aiohttp_jinja2
from aiohttp import web

from common.openapi import page
from mail.context import mail_context
from mail.errors import MailError
from mail.pages.routes import routes
from mail.pages.security import PAGE_HEADERS
from mail.web.ownership import parse_id
from mail.webmail import messages, sessions


@routes.get("/webmail")
@page
async def webmail(request: web.Request) -> web.Response:
    html = aiohttp_jinja2.get_env(request.app).get_template("webmail.html").render(screen="webmail")
    return web.Response(text=html, content_type="text/html", headers=PAGE_HEADERS)


def frame_policy(origins: list[str], *, remote: bool) -> str:
    images = " ".join([*origins, "https:"] if remote else origins)
    return "; ".join(
        (
            "sandbox allow-popups allow-popups-to-escape-sandbox",
            "default-src 'none'",
            f"img-src {images}",
            "style-src 'unsafe-inline'",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'self'",
        )
    )


@routes.get("/webmail/frame/{message_id}")
@page
async def frame(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    session = sessions.current(request)
    if session is None:
        return web.Response(status=401, text="sign in first", headers=PAGE_HEADERS)
    remote = request.query.get("remote_content") == "true"
    try:
        found = await messages.read(
            ctx, session, parse_id(request, "message_id"), allow_remote=remote
        )
    except MailError as exc:
        return web.Response(status=exc.status, text=exc.message, headers=PAGE_HEADERS)
    env = aiohttp_jinja2.get_env(request.app)
    html = env.get_template("webmail_frame.html").render(html=found.html, text=found.text)
    # The signed part URLs are relative: the origin the page was reached at, and the public one.
    origins = list(
        dict.fromkeys(
            o for o in (ctx.settings.public_origin, f"{request.scheme}://{request.host}") if o
        )
    )
    headers = {
        **PAGE_HEADERS,
        "Content-Security-Policy": frame_policy(origins, remote=remote),
        "X-Frame-Options": "SAMEORIGIN",
        "Referrer-Policy": "no-referrer",
    }
    return web.Response(text=html, content_type="text/html", headers=headers)
