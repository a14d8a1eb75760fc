"""Pinterest: pins through API v5.

OAuth 2.0 (client credentials in HTTP Basic at /v5/oauth/token; scopes are
comma-separated), GET /v5/user_account for the account, the first board of
GET /v5/boards as where pins go (kept with the account), an image pin from
the media's public URL, a video pin through POST /v5/media (register, upload
to the returned URL with its parameters, then wait for ``succeeded``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import aiohttp

from content.social.networks import (
    App,
    Http,
    Network,
    Outgoing,
    Processing,
    Profile,
    Published,
    PublishError,
    Tokens,
)


class Pinterest(Network):
    key, label = "pinterest", "Pinterest"
    supported = True
    env_fallback = True
    pkce = False
    scope_separator = ","
    defaults: ClassVar[Mapping[str, str]] = {
        "authorize": "https://www.pinterest.com/oauth/",
        "token": "https://api.pinterest.com/v5/oauth/token",
        "api": "https://api.pinterest.com",
    }
    scopes = ("boards:read", "pins:read", "pins:write", "user_accounts:read")
    guide = (
        "Open developers.pinterest.com, Connect app, and create an app.",
        "Add the callback URL shown here as a redirect URI.",
        "Copy the App id and App secret key. Pins go to the account's first board.",
    )

    async def exchange(
        self, http: Http, app: App, *, code: str, verifier: str, redirect_uri: str, base: str = ""
    ) -> list[tuple[Tokens, Profile]]:
        tokens = await self.code_tokens(http, app, code, verifier, redirect_uri)
        api = self.endpoint(app, "api")
        auth = {"Authorization": f"Bearer {tokens.access}"}
        me = await http.call("GET", f"{api}/v5/user_account", headers=auth)
        boards = await http.call("GET", f"{api}/v5/boards?page_size=1", headers=auth)
        items = boards.get("items") or []
        board = items[0]["id"] if items else ""
        remote = str(me.get("id") or me["username"])
        return [
            (
                tokens,
                Profile(
                    remote, me["username"], me.get("business_name") or "", "", {"board": board}
                ),
            )
        ]

    async def publish(
        self, http: Http, app: App, account: Profile, tokens: Tokens, post: Outgoing
    ) -> Published:
        api = self.endpoint(app, "api")
        auth = {"Authorization": f"Bearer {tokens.access}"}
        board = account.options.get("board")
        if not board:
            raise PublishError(
                "content", "this Pinterest account has no board to pin to; create one and reconnect"
            )
        item = post.media[0]
        if item.type.startswith("video/"):
            media = await http.call(
                "POST", f"{api}/v5/media", json={"media_type": "video"}, headers=auth
            )
            form = aiohttp.FormData()
            for name, value in (media.get("upload_parameters") or {}).items():
                form.add_field(name, value)
            form.add_field("file", item.data, filename=item.filename, content_type=item.type)
            await http.call("POST", media["upload_url"], data=form)
            state = {
                "board": board,
                "media": media["media_id"],
                "text": post.text,
                "link": post.link,
                "alt": item.alt,
            }
            return await self.resume(http, app, account, tokens, state)
        source = {"source_type": "image_url", "url": item.public_url}
        return await self._pin(http, api, auth, board, post.text, post.link, item.alt, source)

    async def resume(
        self, http: Http, app: App, account: Profile, tokens: Tokens, state: dict[str, Any]
    ) -> Published:
        api = self.endpoint(app, "api")
        auth = {"Authorization": f"Bearer {tokens.access}"}
        status = await http.call("GET", f"{api}/v5/media/{state['media']}", headers=auth)
        if status.get("status") == "failed":
            raise PublishError("content", "Pinterest could not process the video")
        if status.get("status") != "succeeded":
            raise Processing(state, 10.0)
        source = {
            "source_type": "video_id",
            "media_id": state["media"],
            "cover_image_key_frame_time": 0,
        }
        return await self._pin(
            http, api, auth, state["board"], state["text"], state["link"], state["alt"], source
        )

    async def _pin(
        self,
        http: Http,
        api: str,
        auth: dict[str, str],
        board: str,
        text: str,
        link: str | None,
        alt: str,
        source: dict[str, Any],
    ) -> Published:
        body: dict[str, Any] = {"board_id": board, "description": text, "media_source": source}
        if link:
            body["link"] = link
        if alt:
            body["alt_text"] = alt[:500]
        pin = await http.call("POST", f"{api}/v5/pins", json=body, headers=auth)
        return Published(str(pin["id"]), f"https://www.pinterest.com/pin/{pin['id']}/")
