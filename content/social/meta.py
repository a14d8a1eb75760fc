"""Meta's three networks on the Graph API: Facebook Pages, Instagram and Threads.

Facebook: Facebook Login (the code exchanged at oauth/access_token by GET,
then for a long-lived user token), every Page of /me/accounts connected with
its own Page token; posts to /{page}/feed, photos uploaded unpublished from
their public URL and attached, a video to /{page}/videos by file_url.

Instagram (Instagram API with Instagram Login) and Threads share one shape:
a short-lived token exchanged for a long-lived one (refreshed with
ig_refresh_token / th_refresh_token), then a container (the network fetches
the media from its public URL under PUBLIC_URL), its status, and publish.
A container still IN_PROGRESS leaves the target ``processing``.

Graph errors are {error: {message, type, code, error_subcode, is_transient}}:
code 190 (and 102, permissions 10 and 200-299) needs a reconnect; 1, 2, 4,
17, 32, 341, 368-less throttles (613, 80001-80014) and transient ones retry.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, ClassVar

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
from content.social.rules import sent_text

_RECONNECT = {102, 190, 10}
_RETRY = {1, 2, 4, 17, 32, 341, 613}


def graph_kind(status: int, body: Any) -> str | None:
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return None
    code = error.get("code")
    if code in _RECONNECT or (isinstance(code, int) and 200 <= code <= 299):
        return "reconnect"
    if (
        code in _RETRY
        or (isinstance(code, int) and 80001 <= code <= 80014)
        or error.get("is_transient")
    ):
        return "retry"
    return None


class Facebook(Network):
    key, label = "facebook", "Facebook Pages"
    supported = True
    pkce = False
    defaults: ClassVar[Mapping[str, str]] = {
        "authorize": "https://www.facebook.com/v21.0/dialog/oauth",
        "token": "https://graph.facebook.com/v21.0/oauth/access_token",
        "api": "https://graph.facebook.com/v21.0",
    }
    scope_separator = ","
    scopes = ("pages_show_list", "pages_manage_posts", "pages_read_engagement")
    guide = (
        "Open developers.facebook.com, create an app of type Business and add Facebook Login.",
        "Under Facebook Login settings add the callback URL shown here as a valid OAuth redirect URI.",
        "Copy the App ID and App Secret (App settings, Basic). Every Page you manage is connected.",
    )

    def classify(self, status: int, body: Any) -> str | None:
        return graph_kind(status, body)

    async def exchange(
        self, http: Http, app: App, *, code: str, verifier: str, redirect_uri: str, base: str = ""
    ) -> list[tuple[Tokens, Profile]]:
        token_url = self.endpoint(app, "token")
        short = await http.call(
            "GET",
            token_url,
            params={
                "client_id": app.client_id,
                "client_secret": app.client_secret,
                "redirect_uri": redirect_uri,
                "code": code,
            },
        )
        long = await http.call(
            "GET",
            token_url,
            params={
                "grant_type": "fb_exchange_token",
                "client_id": app.client_id,
                "client_secret": app.client_secret,
                "fb_exchange_token": short["access_token"],
            },
        )
        pages = await http.call(
            "GET",
            f"{self.endpoint(app, 'api')}/me/accounts",
            params={
                "fields": "id,name,username,access_token",
                "access_token": long["access_token"],
            },
        )
        # Page tokens from a long-lived user token do not expire.
        return [
            (
                Tokens(page["access_token"]),
                Profile(page["id"], page.get("username") or page["name"], page["name"]),
            )
            for page in pages.get("data", [])
        ]

    async def publish(
        self, http: Http, app: App, account: Profile, tokens: Tokens, post: Outgoing
    ) -> Published:
        api = self.endpoint(app, "api")
        page = account.remote_id
        token = {"access_token": tokens.access}
        if post.media and post.media[0].type.startswith("video/"):
            # /videos has no link parameter: the link travels in the description.
            description = post.text
            if post.link and post.link not in description:
                description = f"{description}\n\n{post.link}" if description else post.link
            video = await http.call(
                "POST",
                f"{api}/{page}/videos",
                data={"file_url": post.media[0].public_url, "description": description, **token},
            )
            return Published(
                str(video["id"]), f"https://www.facebook.com/{page}/videos/{video['id']}"
            )
        form: dict[str, str] = {"message": post.text, **token}
        if post.link:
            form["link"] = post.link
        for i, item in enumerate(post.media):
            photo = await http.call(
                "POST",
                f"{api}/{page}/photos",
                data={
                    "url": item.public_url,
                    "published": "false",
                    "alt_text_custom": item.alt,
                    **token,
                },
            )
            form[f"attached_media[{i}]"] = json.dumps({"media_fbid": photo["id"]})
        done = await http.call("POST", f"{api}/{page}/feed", data=form)
        return Published(str(done["id"]), f"https://www.facebook.com/{done['id']}")


class GraphContainers(Network):
    """Instagram and Threads: container, status, publish."""

    pkce = False
    token_auth = "body"
    scope_separator = ","
    version = ""
    create_path = ""
    publish_path = ""
    status_field = ""
    exchange_grant = ""
    refresh_grant = ""

    def classify(self, status: int, body: Any) -> str | None:
        return graph_kind(status, body)

    async def exchange(
        self, http: Http, app: App, *, code: str, verifier: str, redirect_uri: str, base: str = ""
    ) -> list[tuple[Tokens, Profile]]:
        body = await http.call(
            "POST",
            self.endpoint(app, "token"),
            data={
                "client_id": app.client_id,
                "client_secret": app.client_secret,
                "grant_type": "authorization_code",
                "redirect_uri": redirect_uri,
                "code": code,
            },
        )
        short = body["data"][0] if isinstance(body.get("data"), list) else body
        api = self.endpoint(app, "api")
        long = await http.call(
            "GET",
            f"{api}/access_token",
            params={
                "grant_type": self.exchange_grant,
                "client_secret": app.client_secret,
                "access_token": short["access_token"],
            },
        )
        tokens = self._long(http, long)
        me = await http.call(
            "GET",
            f"{api}/{self.version}/me",
            params={"fields": "id,user_id,username", "access_token": tokens.access},
        )
        remote = str(me.get("user_id") or me["id"])
        return [
            (tokens, Profile(remote, me["username"], me.get("name", ""), "", {"id": str(me["id"])}))
        ]

    def _long(self, http: Http, body: Mapping[str, Any]) -> Tokens:
        seconds = body.get("expires_in")
        expires = http.now + timedelta(seconds=int(seconds)) if isinstance(seconds, int) else None
        # A long-lived token refreshes itself: it is its own refresh token.
        return Tokens(body["access_token"], body["access_token"], expires)

    async def refresh(self, http: Http, app: App, tokens: Tokens, base: str) -> Tokens | None:
        body = await http.call(
            "GET",
            f"{self.endpoint(app, 'api')}/refresh_access_token",
            params={
                "grant_type": self.refresh_grant,
                "access_token": tokens.refresh or tokens.access,
            },
        )
        return self._long(http, body)

    def _item(self, item: Any) -> dict[str, str]:
        raise NotImplementedError

    def _caption(self, post: Outgoing) -> dict[str, str]:
        raise NotImplementedError

    async def publish(
        self, http: Http, app: App, account: Profile, tokens: Tokens, post: Outgoing
    ) -> Published:
        api = f"{self.endpoint(app, 'api')}/{self.version}"
        user = account.options.get("id") or account.remote_id
        token = {"access_token": tokens.access}
        url = f"{api}/{user}/{self.create_path}"
        if len(post.media) > 1:
            children = []
            for item in post.media:
                # Carousel items are images or plain videos, not reels.
                fields = self._item(item) | {"is_carousel_item": "true"}
                if fields.get("media_type") == "REELS":
                    fields["media_type"] = "VIDEO"
                child = await http.call("POST", url, data={**fields, **token})
                children.append(str(child["id"]))
            form = {"media_type": "CAROUSEL", "children": ",".join(children), **self._caption(post)}
        elif post.media:
            form = {**self._item(post.media[0]), **self._caption(post)}
        else:
            form = {"media_type": "TEXT", **self._caption(post)}
        container = await http.call("POST", url, data={**form, **token})
        return await self.resume(
            http, app, account, tokens, {"container": container["id"], "user": user}
        )

    async def resume(
        self, http: Http, app: App, account: Profile, tokens: Tokens, state: dict[str, Any]
    ) -> Published:
        api = f"{self.endpoint(app, 'api')}/{self.version}"
        token = {"access_token": tokens.access}
        status = await http.call(
            "GET",
            f"{api}/{state['container']}",
            params={"fields": f"{self.status_field},error_message", **token},
        )
        code = status.get(self.status_field)
        if code in ("ERROR", "EXPIRED"):
            raise PublishError("content", status.get("error_message") or f"the container is {code}")
        if code != "FINISHED":
            raise Processing(state, 10.0)
        done = await http.call(
            "POST",
            f"{api}/{state['user']}/{self.publish_path}",
            data={"creation_id": state["container"], **token},
        )
        link = await http.call(
            "GET", f"{api}/{done['id']}", params={"fields": "permalink", **token}
        )
        return Published(str(done["id"]), link.get("permalink", ""))


class Instagram(GraphContainers):
    key, label = "instagram", "Instagram"
    supported = True
    defaults: ClassVar[Mapping[str, str]] = {
        "authorize": "https://www.instagram.com/oauth/authorize",
        "token": "https://api.instagram.com/oauth/access_token",
        "api": "https://graph.instagram.com",
    }
    scopes = ("instagram_business_basic", "instagram_business_content_publish")
    version = "v21.0"
    create_path, publish_path, status_field = "media", "media_publish", "status_code"
    exchange_grant, refresh_grant = "ig_exchange_token", "ig_refresh_token"
    guide = (
        "The Instagram account must be a professional (business or creator) account.",
        "Open developers.facebook.com, create an app, add the Instagram product with 'API setup with Instagram login'.",
        "Add the callback URL shown here under Business login settings and copy the Instagram app ID and secret.",
    )

    def _item(self, item: Any) -> dict[str, str]:
        if item.type.startswith("video/"):
            return {"media_type": "REELS", "video_url": item.public_url}
        out = {"image_url": item.public_url}
        if item.alt:
            out["alt_text"] = item.alt
        return out

    def _caption(self, post: Outgoing) -> dict[str, str]:
        # Links in captions are not clickable on Instagram: the link is left out.
        return {"caption": post.text}


class Threads(GraphContainers):
    key, label = "threads", "Threads"
    supported = True
    defaults: ClassVar[Mapping[str, str]] = {
        "authorize": "https://threads.net/oauth/authorize",
        "token": "https://graph.threads.net/oauth/access_token",
        "api": "https://graph.threads.net",
    }
    scopes = ("threads_basic", "threads_content_publish")
    version = "v1.0"
    create_path, publish_path, status_field = "threads", "threads_publish", "status"
    exchange_grant, refresh_grant = "th_exchange_token", "th_refresh_token"
    guide = (
        "Open developers.facebook.com, create an app with the 'Access the Threads API' use case.",
        "Add the callback URL shown here as a redirect callback URL.",
        "Copy the Threads app ID and Threads app secret.",
    )

    def _item(self, item: Any) -> dict[str, str]:
        if item.type.startswith("video/"):
            return {"media_type": "VIDEO", "video_url": item.public_url}
        out = {"media_type": "IMAGE", "image_url": item.public_url}
        if item.alt:
            out["alt_text"] = item.alt
        return out

    def _caption(self, post: Outgoing) -> dict[str, str]:
        return {"text": sent_text(self.rules, post.text, post.link)}
