"""open_screen: the one tool that acts. It moves the admin to a screen the
person may open (the admin's navigation, content/admin/pages.py ``NAV``, and
one entry or content type); nothing is read or written."""

from __future__ import annotations

from typing import Any

from common.openapi import string
from content.admin.pages import ADMIN, NAV
from content.assistant.tools.base import Args, Refused, Tool, params
from content.auth.principal import Principal
from content.context import Context

_SCREENS = {s.href.strip("/"): s for s in NAV}
# Screens of one record: the path below /admin, and what they need.
_RECORDS = {"entry": ("/entries/{id}", "content.read"), "type": ("/types/{id}", "types.manage")}
SCREENS = (*_SCREENS, *_RECORDS, "new_entry")


async def open_screen(ctx: Context, principal: Principal, args: Args) -> dict[str, Any]:
    screen, record = args["screen"], args.get("id")
    if screen in _RECORDS:
        if not record:
            raise Refused(f"the {screen} screen needs the id of the {screen}")
        template, permission = _RECORDS[screen]
        path = template.format(id=record)
    elif screen == "new_entry":
        permission = "content.write"
        path = "/entries/new" + (f"?type={record}" if record else "")
    else:
        permission = _SCREENS[screen].permission
        path = _SCREENS[screen].href
    if not principal.can(permission):
        raise Refused(f"the {principal.user.role} role cannot open the {screen} screen")
    return {"path": f"{ctx.prefix}{ADMIN}{path}"}


TOOL = Tool(
    "open_screen",
    "move",
    "content.read",
    "Move the person's admin to a screen: a list (entries, media, types, ...), one entry or"
    " content type (id), or a new entry of a type (new_entry, id = the type).",
    params(
        {
            "screen": string(enum=SCREENS),
            "id": string(min_length=1, max_length=64, pattern="^[A-Za-z0-9_-]+$"),
        },
        required=("screen",),
    ),
    run=open_screen,
)
