"""The networks behind one interface: connect, refresh, publish, and classify what went wrong.

Each adapter speaks its network's documented wire format; every base URL can
be overridden by the network's app row (``endpoints``) or, for a Bluesky PDS
or a Mastodon instance, by the account itself, so tests point them at local
stand-ins (tests/content/social_standins.py). Failures are one exception,
:class:`PublishError`, carrying the kind the target records:

- ``reconnect``: the token is expired or revoked; refresh, else an admin reconnects;
- ``retry``: rate limits, outages, timeouts; tried again with backoff;
- ``content``: the network refused the post itself; not retried.

The network's own error text is kept as it came.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any, ClassVar, NoReturn
from urllib.parse import urlencode

import aiohttp

from content.social.rules import RULES, URL, Rules, sent_text

TIMEOUT = aiohttp.ClientTimeout(total=60)
# X's chunked upload: 1 MiB segments (the API takes up to 5 MB each).
CHUNK = 1024 * 1024


class PublishError(Exception):
    def __init__(self, kind: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message[:1000]
        self.retry_after = retry_after


@dataclass(frozen=True)
class App:
    """A network's app credentials, from its row or SOCIAL_OAUTH_<NETWORK>_*."""

    client_id: str = ""
    client_secret: str = ""
    endpoints: Mapping[str, str] = field(default_factory=dict)
    scopes: tuple[str, ...] = ()


@dataclass
class Tokens:
    access: str
    refresh: str = ""
    expires_at: datetime | None = None

    def as_json(self) -> str:
        return json.dumps({"access": self.access, "refresh": self.refresh})


@dataclass(frozen=True)
class Profile:
    remote_id: str
    handle: str
    name: str
    base_url: str = ""
    # What a network needs beyond the id (Pinterest: the board pins go to).
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Attachment:
    type: str
    filename: str
    data: bytes
    alt: str
    public_url: str


@dataclass(frozen=True)
class Published:
    remote_id: str
    url: str


@dataclass(frozen=True)
class Outgoing:
    text: str
    link: str | None
    media: Sequence[Attachment]
    idempotency_key: str


def retry_after(headers: Mapping[str, str], now: datetime) -> float | None:
    """Seconds to wait from Retry-After or the network's rate-limit reset header."""
    raw = headers.get("Retry-After")
    if raw:
        if raw.strip().isdigit():
            return float(raw)
        try:
            return max(0.0, (parsedate_to_datetime(raw) - now).total_seconds())
        except (TypeError, ValueError):
            pass
    for name in ("x-rate-limit-reset", "ratelimit-reset", "X-RateLimit-Reset"):
        value = headers.get(name)
        if not value:
            continue
        if re.fullmatch(r"\d+(\.\d+)?", value.strip()):
            return max(0.0, float(value) - now.timestamp())
        try:
            return max(0.0, (datetime.fromisoformat(value) - now).total_seconds())
        except ValueError:
            continue
    return None


def error_text(body: Any, fallback: str) -> str:
    """The network's own words, from the shapes these APIs answer with."""
    if isinstance(body, dict):
        errors = body.get("errors")
        if isinstance(errors, list) and errors and isinstance(errors[0], dict):
            message = errors[0].get("message")
            if isinstance(message, str):
                return message
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])  # Graph API
        for key in ("detail", "message", "error_description", "error", "title"):
            if isinstance(body.get(key), str):
                return str(body[key])
    if isinstance(body, str) and body.strip():
        return body.strip()[:500]
    return fallback


class Processing(Exception):
    """The network took the post and confirms it later: ask again with ``state``."""

    def __init__(self, state: dict[str, Any], after: float = 10.0) -> None:
        super().__init__("processing")
        self.state = state
        self.after = after


Classifier = Callable[[int, Any], "str | None"]


class Http:
    """One send's HTTP calls; turns failures into :class:`PublishError`."""

    def __init__(
        self, session: aiohttp.ClientSession, now: datetime, classify: Classifier | None = None
    ) -> None:
        self.session = session
        self.now = now
        self.classify = classify

    async def call(self, method: str, url: str, **kwargs: Any) -> Any:
        body, _ = await self.request(method, url, **kwargs)
        return body

    async def request(self, method: str, url: str, **kwargs: Any) -> tuple[Any, Mapping[str, str]]:
        try:
            async with self.session.request(method, url, **kwargs) as resp:
                raw = await resp.read()
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                if resp.status < 300:
                    return body, resp.headers
                self.fail(resp.status, body, resp.headers)
        except aiohttp.ClientError as exc:
            raise PublishError("retry", f"could not reach {url}: {exc}") from exc
        except TimeoutError as exc:
            raise PublishError("retry", f"{url} did not answer in time") from exc
        raise AssertionError("unreachable")

    def fail(self, status: int, body: Any, headers: Mapping[str, str]) -> NoReturn:
        text = error_text(body, f"HTTP {status}")
        kind = self.classify(status, body) if self.classify else None
        if kind is None:
            if status == 401 or (isinstance(body, dict) and body.get("error") == "ExpiredToken"):
                kind = "reconnect"
            elif status in (408, 429) or status >= 500:
                kind = "retry"
            else:
                kind = "content"
        wait = retry_after(headers, self.now) if kind == "retry" else None
        raise PublishError(kind, text, wait)


def basic(client_id: str, secret: str) -> str:
    return "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()


def _expires(now: datetime, body: Mapping[str, Any]) -> datetime | None:
    seconds = body.get("expires_in")
    return now + timedelta(seconds=int(seconds)) if isinstance(seconds, int) else None


class Network:
    key = ""
    label = ""
    # oauth (a consent URL), app_password (no redirect), or instance (Mastodon:
    # an app registered per instance, then a consent URL).
    connect = "oauth"
    pkce = True
    # How the token endpoint takes the client: HTTP Basic, or in the form body.
    token_auth = "basic"
    scope_separator = " "
    # False: the rules are checked and shown, but accounts cannot be connected yet.
    supported = False
    env_fallback = False
    defaults: ClassVar[Mapping[str, str]] = {}
    scopes: tuple[str, ...] = ()
    guide: tuple[str, ...] = ()
    extra_authorize: ClassVar[Mapping[str, str]] = {}

    @property
    def rules(self) -> Rules:
        return RULES[self.key]

    def endpoint(self, app: App, name: str) -> str:
        # Authorize and token URLs are used as given (Pinterest's ends in a slash).
        url = app.endpoints.get(name) or self.defaults.get(name, "")
        return url.rstrip("/") if name == "api" else url

    def classify(self, status: int, body: Any) -> str | None:
        """The kind of a failure where the network departs from plain HTTP meanings."""
        return None

    def authorize_url(
        self, app: App, *, state: str, challenge: str, redirect_uri: str, base: str = ""
    ) -> str:
        query = {
            "response_type": "code",
            "client_id": app.client_id,
            "redirect_uri": redirect_uri,
            "scope": self.scope_separator.join(app.scopes or self.scopes),
            "state": state,
            **self.extra_authorize,
        }
        if self.pkce:
            query |= {"code_challenge": challenge, "code_challenge_method": "S256"}
        return f"{base or self.endpoint(app, 'authorize')}?{urlencode(query)}"

    async def token_request(self, http: Http, app: App, form: dict[str, str]) -> Tokens:
        headers = {}
        if self.token_auth == "basic" and app.client_secret:
            headers["Authorization"] = basic(app.client_id, app.client_secret)
        else:
            form["client_id"] = app.client_id
            if app.client_secret:
                form["client_secret"] = app.client_secret
        body = await http.call("POST", self.endpoint(app, "token"), data=form, headers=headers)
        return Tokens(body["access_token"], body.get("refresh_token", ""), _expires(http.now, body))

    async def code_tokens(
        self, http: Http, app: App, code: str, verifier: str, redirect_uri: str
    ) -> Tokens:
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
        if self.pkce:
            form["code_verifier"] = verifier
        return await self.token_request(http, app, form)

    async def exchange(
        self, http: Http, app: App, *, code: str, verifier: str, redirect_uri: str, base: str = ""
    ) -> list[tuple[Tokens, Profile]]:
        """The accounts this consent connects (a Facebook consent can name several Pages)."""
        raise NotImplementedError

    async def refresh(self, http: Http, app: App, tokens: Tokens, base: str) -> Tokens | None:
        """New tokens, or None when there is no refresh token (the admin reconnects)."""
        if not tokens.refresh:
            return None
        fresh = await self.token_request(
            http, app, {"grant_type": "refresh_token", "refresh_token": tokens.refresh}
        )
        return Tokens(fresh.access, fresh.refresh or tokens.refresh, fresh.expires_at)

    async def publish(
        self, http: Http, app: App, account: Profile, tokens: Tokens, post: Outgoing
    ) -> Published:
        """The post's id and link; raises PublishError, or Processing to be asked again."""
        raise NotImplementedError

    async def resume(
        self, http: Http, app: App, account: Profile, tokens: Tokens, state: dict[str, Any]
    ) -> Published:
        """Carry on with a post the network was still processing."""
        raise PublishError("retry", "this network does not process posts asynchronously")


class X(Network):
    key, label = "x", "X"
    supported = True
    env_fallback = True
    defaults: ClassVar[Mapping[str, str]] = {
        "authorize": "https://x.com/i/oauth2/authorize",
        "token": "https://api.x.com/2/oauth2/token",
        "api": "https://api.x.com",
    }
    scopes = ("tweet.read", "tweet.write", "users.read", "media.write", "offline.access")
    guide = (
        "Open developer.x.com, create a project and an app.",
        "Under User authentication settings choose OAuth 2.0, type Web App.",
        "Add the callback URL shown here and copy the Client ID and Client Secret.",
    )

    async def exchange(
        self, http: Http, app: App, *, code: str, verifier: str, redirect_uri: str, base: str = ""
    ) -> list[tuple[Tokens, Profile]]:
        tokens = await self.code_tokens(http, app, code, verifier, redirect_uri)
        me = await http.call(
            "GET",
            f"{self.endpoint(app, 'api')}/2/users/me",
            headers={"Authorization": f"Bearer {tokens.access}"},
        )
        data = me["data"]
        return [(tokens, Profile(data["id"], data["username"], data.get("name", "")))]

    async def _upload(
        self, http: Http, api: str, auth: dict[str, str], item: Attachment
    ) -> tuple[str, float | None]:
        """The media id, and the seconds to wait when X is still processing it."""
        video = item.type.startswith("video/")
        init = await http.call(
            "POST",
            f"{api}/2/media/upload/initialize",
            json={
                "media_type": item.type,
                "total_bytes": len(item.data),
                "media_category": "tweet_video" if video else "tweet_image",
            },
            headers=auth,
        )
        media_id = str(init["data"]["id"])
        for index, start in enumerate(range(0, len(item.data), CHUNK)):
            form = aiohttp.FormData()
            form.add_field("segment_index", str(index))
            form.add_field("media", item.data[start : start + CHUNK], filename=item.filename)
            await http.call(
                "POST", f"{api}/2/media/upload/{media_id}/append", data=form, headers=auth
            )
        done = await http.call("POST", f"{api}/2/media/upload/{media_id}/finalize", headers=auth)
        return media_id, _x_wait(done["data"].get("processing_info"))

    async def publish(
        self, http: Http, app: App, account: Profile, tokens: Tokens, post: Outgoing
    ) -> Published:
        api = self.endpoint(app, "api")
        auth = {"Authorization": f"Bearer {tokens.access}"}
        uploads = [await self._upload(http, api, auth, item) for item in post.media]
        state: dict[str, Any] = {
            "text": sent_text(self.rules, post.text, post.link),
            "media_ids": [media_id for media_id, _ in uploads],
            "pending": [media_id for media_id, wait in uploads if wait is not None],
        }
        if state["pending"]:
            # Processing is asynchronous: ask STATUS again once it should be done.
            raise Processing(state, max(wait or 0 for _, wait in uploads))
        return await self._tweet(http, api, auth, account, state)

    async def resume(
        self, http: Http, app: App, account: Profile, tokens: Tokens, state: dict[str, Any]
    ) -> Published:
        api = self.endpoint(app, "api")
        auth = {"Authorization": f"Bearer {tokens.access}"}
        waits: dict[str, float] = {}
        for media_id in state["pending"]:
            body = await http.call(
                "GET",
                f"{api}/2/media/upload",
                params={"command": "STATUS", "media_id": media_id},
                headers=auth,
            )
            wait = _x_wait(body["data"].get("processing_info"))
            if wait is not None:
                waits[media_id] = wait
        if waits:
            raise Processing({**state, "pending": list(waits)}, max(waits.values()))
        return await self._tweet(http, api, auth, account, state)

    async def _tweet(
        self, http: Http, api: str, auth: dict[str, str], account: Profile, state: dict[str, Any]
    ) -> Published:
        payload: dict[str, Any] = {"text": state["text"]}
        if state["media_ids"]:
            payload["media"] = {"media_ids": state["media_ids"]}
        body = await http.call("POST", f"{api}/2/tweets", json=payload, headers=auth)
        tweet_id = body["data"]["id"]
        return Published(tweet_id, f"https://x.com/{account.handle}/status/{tweet_id}")


def _x_wait(info: Any) -> float | None:
    """X's processing_info: None when the media is ready, else the seconds to wait."""
    if info and info.get("state") == "failed":
        raise PublishError("content", error_text(info.get("error"), "media processing failed"))
    if info and info.get("state") in ("pending", "in_progress"):
        return float(info.get("check_after_secs", 5))
    return None


class Bluesky(Network):
    key, label = "bluesky", "Bluesky"
    connect = "app_password"
    pkce = False
    supported = True
    defaults: ClassVar[Mapping[str, str]] = {"api": "https://bsky.social"}
    guide = (
        "In Bluesky open Settings, Privacy and security, App passwords.",
        "Add an app password (not your account password) and copy it.",
        "Enter your handle and the app password here; nothing else is needed.",
    )

    async def login(
        self, http: Http, base: str, identifier: str, password: str
    ) -> tuple[Tokens, Profile]:
        body = await http.call(
            "POST",
            f"{base}/xrpc/com.atproto.server.createSession",
            json={"identifier": identifier, "password": password},
        )
        return Tokens(body["accessJwt"], body["refreshJwt"]), Profile(
            body["did"], body["handle"], body.get("handle", ""), base
        )

    async def refresh(self, http: Http, app: App, tokens: Tokens, base: str) -> Tokens | None:
        body = await http.call(
            "POST",
            f"{base}/xrpc/com.atproto.server.refreshSession",
            headers={"Authorization": f"Bearer {tokens.refresh}"},
        )
        return Tokens(body["accessJwt"], body["refreshJwt"])

    async def publish(
        self, http: Http, app: App, account: Profile, tokens: Tokens, post: Outgoing
    ) -> Published:
        base = account.base_url
        auth = {"Authorization": f"Bearer {tokens.access}"}
        text = sent_text(self.rules, post.text, post.link)
        record: dict[str, Any] = {
            "$type": "app.bsky.feed.post",
            "text": text,
            "createdAt": http.now.isoformat().replace("+00:00", "Z"),
        }
        facets = link_facets(text)
        if facets:
            record["facets"] = facets
        blobs = []
        for item in post.media:
            up = await http.call(
                "POST",
                f"{base}/xrpc/com.atproto.repo.uploadBlob",
                data=item.data,
                headers=auth | {"Content-Type": item.type},
            )
            blobs.append((item, up["blob"]))
        if blobs and blobs[0][0].type.startswith("video/"):
            record["embed"] = {"$type": "app.bsky.embed.video", "video": blobs[0][1]}
        elif blobs:
            record["embed"] = {
                "$type": "app.bsky.embed.images",
                "images": [{"alt": item.alt, "image": blob} for item, blob in blobs],
            }
        body = await http.call(
            "POST",
            f"{base}/xrpc/com.atproto.repo.createRecord",
            json={"repo": account.remote_id, "collection": "app.bsky.feed.post", "record": record},
            headers=auth,
        )
        rkey = body["uri"].rsplit("/", 1)[-1]
        return Published(body["uri"], f"https://bsky.app/profile/{account.handle}/post/{rkey}")


def link_facets(text: str) -> list[dict[str, Any]]:
    """AT Protocol facets for the links of ``text``: byte offsets into its UTF-8."""
    facets = []
    for match in URL.finditer(text):
        start = len(text[: match.start()].encode())
        end = start + len(match.group().encode())
        facets.append(
            {
                "index": {"byteStart": start, "byteEnd": end},
                "features": [{"$type": "app.bsky.richtext.facet#link", "uri": match.group()}],
            }
        )
    return facets


class Mastodon(Network):
    key, label = "mastodon", "Mastodon"
    connect = "instance"
    supported = True
    scopes = ("read:accounts", "write:statuses", "write:media")
    guide = (
        "Nothing to register: enter the address of your instance (for example https://mastodon.social).",
        "The CMS registers its app on that instance once and keeps it.",
        "Press Connect and approve on your instance.",
    )

    def authorize_url(
        self, app: App, *, state: str, challenge: str, redirect_uri: str, base: str = ""
    ) -> str:
        return super().authorize_url(
            app,
            state=state,
            challenge=challenge,
            redirect_uri=redirect_uri,
            base=f"{base}/oauth/authorize",
        )

    async def register(self, http: Http, base: str, redirect_uri: str, website: str) -> App:
        body = await http.call(
            "POST",
            f"{base}/api/v1/apps",
            json={
                "client_name": "CMS",
                "redirect_uris": redirect_uri,
                "scopes": " ".join(self.scopes),
                "website": website,
            },
        )
        return App(body["client_id"], body["client_secret"])

    async def exchange(
        self, http: Http, app: App, *, code: str, verifier: str, redirect_uri: str, base: str = ""
    ) -> list[tuple[Tokens, Profile]]:
        body = await http.call(
            "POST",
            f"{base}/oauth/token",
            data={
                "grant_type": "authorization_code",
                "code": code,
                "client_id": app.client_id,
                "client_secret": app.client_secret,
                "redirect_uri": redirect_uri,
                "code_verifier": verifier,
                "scope": " ".join(self.scopes),
            },
        )
        tokens = Tokens(body["access_token"])
        me = await http.call(
            "GET",
            f"{base}/api/v1/accounts/verify_credentials",
            headers={"Authorization": f"Bearer {tokens.access}"},
        )
        return [(tokens, Profile(str(me["id"]), me["acct"], me.get("display_name", ""), base))]

    async def publish(
        self, http: Http, app: App, account: Profile, tokens: Tokens, post: Outgoing
    ) -> Published:
        base = account.base_url
        auth = {"Authorization": f"Bearer {tokens.access}"}
        media_ids, pending = [], []
        for item in post.media:
            form = aiohttp.FormData()
            form.add_field("file", item.data, filename=item.filename, content_type=item.type)
            if item.alt:
                form.add_field("description", item.alt)
            up = await http.call("POST", f"{base}/api/v2/media", data=form, headers=auth)
            media_ids.append(str(up["id"]))
            if up.get("url") is None:  # 202: processed asynchronously
                pending.append(str(up["id"]))
        state = {
            "status": sent_text(self.rules, post.text, post.link),
            "media_ids": media_ids,
            "pending": pending,
            "key": post.idempotency_key,
        }
        return await self.resume(http, app, account, tokens, state)

    async def resume(
        self, http: Http, app: App, account: Profile, tokens: Tokens, state: dict[str, Any]
    ) -> Published:
        base = account.base_url
        auth = {"Authorization": f"Bearer {tokens.access}"}
        still = []
        for media_id in state["pending"]:
            # Still processing (206, url null): a status naming it would be refused,
            # so ask again later rather than upload it again.
            up = await http.call("GET", f"{base}/api/v1/media/{media_id}", headers=auth)
            if up.get("url") is None:
                still.append(media_id)
        if still:
            raise Processing({**state, "pending": still}, 5.0)
        body = await http.call(
            "POST",
            f"{base}/api/v1/statuses",
            json={"status": state["status"], "media_ids": state["media_ids"]},
            headers=auth | {"Idempotency-Key": state["key"]},
        )
        return Published(str(body["id"]), body.get("url") or "")
