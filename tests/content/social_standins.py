"""Local stand-ins for X and Bluesky, speaking their documented wire formats.

X: OAuth 2.0 with PKCE (authorize, /2/oauth2/token with HTTP Basic for a
confidential client, refresh_token grant), GET /2/users/me, the v2 chunked
media upload (initialize, append, finalize) and POST /2/tweets; errors as
RFC 7807-like {title, detail, type, status} with x-rate-limit-reset.
Bluesky: com.atproto.server.createSession / refreshSession (app passwords),
com.atproto.repo.uploadBlob and createRecord; errors {error, message} with
ratelimit-reset. A test queues failures with ``fail_next``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from aiohttp import web


@dataclass
class Failure:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class XStandIn:
    client_id: str = "x-client"
    client_secret: str = "x-secret-abcd"
    codes: dict[str, str] = field(default_factory=dict)  # code -> challenge
    access: set[str] = field(default_factory=set)
    refresh: set[str] = field(default_factory=set)
    tweets: list[dict[str, Any]] = field(default_factory=list)
    media: dict[str, int] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)
    refreshed: int = 0
    # STATUS checks a finalized upload answers in_progress before succeeded (0: ready at once)
    processing_polls: int = 0
    processing: dict[str, int] = field(default_factory=dict)
    status_checks: int = 0

    def fail_next(self, status: int, body: dict[str, Any], **headers: str) -> None:
        self.failures.append(Failure(status, body, headers))

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/i/oauth2/authorize", self.authorize)
        app.router.add_post("/2/oauth2/token", self.token)
        app.router.add_get("/2/users/me", self.me)
        app.router.add_post("/2/tweets", self.tweet)
        app.router.add_post("/2/media/upload/initialize", self.media_init)
        app.router.add_post("/2/media/upload/{id}/append", self.media_append)
        app.router.add_post("/2/media/upload/{id}/finalize", self.media_finalize)
        app.router.add_get("/2/media/upload", self.media_status)
        return app

    async def authorize(self, request: web.Request) -> web.Response:
        q = request.query
        assert q["response_type"] == "code" and q["client_id"] == self.client_id
        assert q["code_challenge_method"] == "S256"
        code = secrets.token_hex(8)
        self.codes[code] = q["code_challenge"]
        where = q["redirect_uri"] + "?" + urlencode({"code": code, "state": q["state"]})
        raise web.HTTPFound(where)

    def _issue(self) -> web.Response:
        access, refresh = secrets.token_hex(8), secrets.token_hex(8)
        self.access.add(access)
        self.refresh.add(refresh)
        return web.json_response(
            {
                "token_type": "bearer",
                "expires_in": 7200,
                "access_token": access,
                "scope": "tweet.read tweet.write users.read offline.access",
                "refresh_token": refresh,
            }
        )

    async def token(self, request: web.Request) -> web.Response:
        expected = base64.b64encode(f"{self.client_id}:{self.client_secret}".encode()).decode()
        if request.headers.get("Authorization") != f"Basic {expected}":
            return web.json_response(
                {
                    "error": "unauthorized_client",
                    "error_description": "Missing valid authorization header",
                },
                status=401,
            )
        form = await request.post()
        if form["grant_type"] == "authorization_code":
            challenge = self.codes.pop(str(form["code"]), None)
            digest = hashlib.sha256(str(form["code_verifier"]).encode()).digest()
            if challenge != base64.urlsafe_b64encode(digest).rstrip(b"=").decode():
                return web.json_response(
                    {
                        "error": "invalid_request",
                        "error_description": "Value passed for the authorization code was invalid.",
                    },
                    status=400,
                )
            return self._issue()
        if form["grant_type"] == "refresh_token" and form["refresh_token"] in self.refresh:
            self.refresh.discard(str(form["refresh_token"]))
            self.refreshed += 1
            return self._issue()
        return web.json_response(
            {"error": "invalid_request", "error_description": "Invalid refresh token"}, status=400
        )

    def _authorized(self, request: web.Request) -> bool:
        return request.headers.get("Authorization", "").removeprefix("Bearer ") in self.access

    @staticmethod
    def _unauthorized() -> web.Response:
        return web.json_response(
            {
                "title": "Unauthorized",
                "type": "about:blank",
                "status": 401,
                "detail": "Unauthorized",
            },
            status=401,
        )

    async def me(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        return web.json_response(
            {"data": {"id": "2244994945", "name": "Our Site", "username": "oursite"}}
        )

    async def tweet(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        if self.failures:
            f = self.failures.pop(0)
            return web.json_response(f.body, status=f.status, headers=f.headers)
        body = await request.json()
        for media_id in body.get("media", {}).get("media_ids", []):
            assert self.media.get(media_id, 0) > 0, "media finalized before use"
            if media_id in self.processing:
                return web.json_response(
                    {
                        "title": "Invalid Request",
                        "detail": "One or more parameters to your request was invalid.",
                        "type": "https://api.twitter.com/2/problems/invalid-request",
                        "errors": [{"message": "Your media IDs are invalid."}],
                    },
                    status=400,
                )
        tweet_id = str(1445880548472328192 + len(self.tweets))
        self.tweets.append({"id": tweet_id, **body})
        return web.json_response({"data": {"id": tweet_id, "text": body["text"]}}, status=201)

    async def media_init(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        body = await request.json()
        media_id = str(710511363345354753 + len(self.media))
        self.media[media_id] = 0
        assert body["total_bytes"] > 0
        return web.json_response({"data": {"id": media_id, "expires_after_secs": 86400}})

    async def media_append(self, request: web.Request) -> web.Response:
        form = await request.post()
        assert "media" in form and "segment_index" in form
        self.media[request.match_info["id"]] += 1
        return web.json_response({})

    async def media_finalize(self, request: web.Request) -> web.Response:
        media_id = request.match_info["id"]
        data: dict[str, Any] = {"id": media_id, "size": 1, "expires_after_secs": 86400}
        if self.processing_polls:
            self.processing[media_id] = self.processing_polls
            data["processing_info"] = {"state": "pending", "check_after_secs": 1}
        return web.json_response({"data": data})

    async def media_status(self, request: web.Request) -> web.Response:
        """GET /2/media/upload?command=STATUS&media_id=: processing_info until succeeded."""
        if not self._authorized(request):
            return self._unauthorized()
        assert request.query["command"] == "STATUS"
        media_id = request.query["media_id"]
        self.status_checks += 1
        left = self.processing.get(media_id, 0) - 1
        if left > 0:
            self.processing[media_id] = left
            info = {"state": "in_progress", "check_after_secs": 10, "progress_percent": 50}
        else:
            self.processing.pop(media_id, None)
            info = {"state": "succeeded", "progress_percent": 100}
        return web.json_response({"data": {"id": media_id, "processing_info": info}})


DID = "did:plc:ewvi7nxzyoun6zhxrhs64oiz"


def jwt(scope: str) -> str:
    """A PDS session token's shape: header.payload.signature (ES256K, not verified here)."""

    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    now = int(time.time())
    claims = {
        "scope": scope,
        "sub": DID,
        "iat": now,
        "exp": now + 7200,
        "jti": secrets.token_hex(8),
    }
    signature = base64.urlsafe_b64encode(secrets.token_bytes(64)).rstrip(b"=").decode()
    return f"{part({'typ': 'at+jwt', 'alg': 'ES256K'})}.{part(claims)}.{signature}"


@dataclass
class BlueskyStandIn:
    password: str = "abcd-efgh-ijkl-mnop"
    access: set[str] = field(default_factory=set)
    records: list[dict[str, Any]] = field(default_factory=list)
    blobs: int = 0
    failures: list[Failure] = field(default_factory=list)

    def fail_next(self, status: int, body: dict[str, Any], **headers: str) -> None:
        self.failures.append(Failure(status, body, headers))

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/xrpc/com.atproto.server.createSession", self.create_session)
        app.router.add_post("/xrpc/com.atproto.server.refreshSession", self.refresh_session)
        app.router.add_post("/xrpc/com.atproto.repo.uploadBlob", self.upload_blob)
        app.router.add_post("/xrpc/com.atproto.repo.createRecord", self.create_record)
        app.router.add_get("/xrpc/app.bsky.actor.getProfile", self.profile)
        return app

    async def profile(self, request: web.Request) -> web.Response:
        if (denied := self._denied(request)) is not None:
            return denied
        return web.json_response({"did": DID, "handle": "site.bsky.social"})

    def _session(self) -> web.Response:
        access, refresh = jwt("com.atproto.access"), jwt("com.atproto.refresh")
        self.access.add(access)
        return web.json_response(
            {
                "did": DID,
                "handle": "site.bsky.social",
                "accessJwt": access,
                "refreshJwt": refresh,
                "active": True,
            }
        )

    async def create_session(self, request: web.Request) -> web.Response:
        body = await request.json()
        if body.get("password") != self.password:
            return web.json_response(
                {"error": "AuthenticationRequired", "message": "Invalid identifier or password"},
                status=401,
            )
        return self._session()

    async def refresh_session(self, request: web.Request) -> web.Response:
        return self._session()

    def _denied(self, request: web.Request) -> web.Response | None:
        if request.headers.get("Authorization", "").removeprefix("Bearer ") in self.access:
            return None
        return web.json_response(
            {"error": "ExpiredToken", "message": "Token has expired"}, status=400
        )

    async def upload_blob(self, request: web.Request) -> web.Response:
        if (denied := self._denied(request)) is not None:
            return denied
        data = await request.read()
        self.blobs += 1
        return web.json_response(
            {
                "blob": {
                    "$type": "blob",
                    "ref": {"$link": f"bafkrei{self.blobs}"},
                    "mimeType": request.content_type,
                    "size": len(data),
                }
            }
        )

    async def create_record(self, request: web.Request) -> web.Response:
        if (denied := self._denied(request)) is not None:
            return denied
        if self.failures:
            f = self.failures.pop(0)
            return web.json_response(f.body, status=f.status, headers=f.headers)
        body = await request.json()
        assert body["collection"] == "app.bsky.feed.post"
        rkey = f"3k{len(self.records):08d}"
        self.records.append(body["record"])
        return web.json_response(
            {"uri": f"at://{body['repo']}/app.bsky.feed.post/{rkey}", "cid": "bafyrei" + rkey}
        )


async def form_or_json(request: web.Request) -> dict[str, Any]:
    """Mastodon takes a JSON body or a form (``media_ids[]`` repeated)."""
    if request.content_type == "application/json":
        return dict(await request.json())
    form = await request.post()
    out: dict[str, Any] = {k.removesuffix("[]"): v for k, v in form.items()}
    for key in {k for k in form if k.endswith("[]")}:
        out[key.removesuffix("[]")] = form.getall(key)
    if isinstance(out.get("scopes"), str):
        out["scopes"] = out["scopes"]
    out.setdefault("media_ids", [])
    return out


@dataclass
class MastodonStandIn:
    """A Mastodon instance: /api/v1/apps, /oauth/authorize + /oauth/token (PKCE),
    verify_credentials, /api/v2/media (202 while processing) and /api/v1/statuses
    honouring Idempotency-Key; errors {error} with X-RateLimit-Reset (ISO 8601)."""

    apps: list[dict[str, Any]] = field(default_factory=list)
    codes: dict[str, str] = field(default_factory=dict)
    access: set[str] = field(default_factory=set)
    statuses: dict[str, dict[str, Any]] = field(default_factory=dict)  # idempotency key -> status
    media: dict[str, int] = field(default_factory=dict)  # id -> GETs until processed
    failures: list[Failure] = field(default_factory=list)
    processing_polls: int = 0  # media GETs answering 206 before the url is set
    uploads: int = 0

    def fail_next(self, status: int, body: dict[str, Any], **headers: str) -> None:
        self.failures.append(Failure(status, body, headers))

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/api/v1/apps", self.register)
        app.router.add_get("/oauth/authorize", self.authorize)
        app.router.add_post("/oauth/token", self.token)
        app.router.add_get("/api/v1/accounts/verify_credentials", self.me)
        app.router.add_post("/api/v2/media", self.upload)
        app.router.add_get("/api/v1/media/{id}", self.media_status)
        app.router.add_post("/api/v1/statuses", self.status)
        # Rails answers with or without the trailing slash (Mastodon.py sends one).
        for path in (
            "/api/v1/instance",
            "/api/v1/instance/",
            "/api/v2/instance",
            "/api/v2/instance/",
        ):
            app.router.add_get(path, self.instance)
        return app

    async def instance(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "uri": "social.example",
                "domain": "social.example",
                "title": "Stand-in",
                "version": "4.3.0",
                "api_versions": {"mastodon": 2},
            }
        )

    async def register(self, request: web.Request) -> web.Response:
        body = await form_or_json(request)
        app = {
            "id": str(len(self.apps) + 1),
            "name": body["client_name"],
            "client_id": f"mcid{len(self.apps)}",
            "client_secret": f"mcsecret{len(self.apps)}",
            "redirect_uri": body["redirect_uris"],
            "scopes": body["scopes"].split(),
        }
        self.apps.append(app)
        return web.json_response(app)

    async def authorize(self, request: web.Request) -> web.Response:
        q = request.query
        assert any(a["client_id"] == q["client_id"] for a in self.apps)
        code = secrets.token_hex(8)
        self.codes[code] = q["code_challenge"]
        raise web.HTTPFound(
            q["redirect_uri"] + "?" + urlencode({"code": code, "state": q["state"]})
        )

    async def token(self, request: web.Request) -> web.Response:
        form = await request.post()
        app = next((a for a in self.apps if a["client_id"] == form.get("client_id")), None)
        challenge = self.codes.pop(str(form.get("code")), None)
        digest = hashlib.sha256(str(form.get("code_verifier")).encode()).digest()
        if (
            app is None
            or app["client_secret"] != form.get("client_secret")
            or (challenge != base64.urlsafe_b64encode(digest).rstrip(b"=").decode())
        ):
            return web.json_response(
                {
                    "error": "invalid_grant",
                    "error_description": "The provided authorization grant is invalid",
                },
                status=400,
            )
        access = secrets.token_hex(8)
        self.access.add(access)
        return web.json_response(
            {
                "access_token": access,
                "token_type": "Bearer",
                "scope": "read:accounts write:statuses write:media",
                "created_at": 1,
            }
        )

    def _denied(self, request: web.Request) -> web.Response | None:
        if request.headers.get("Authorization", "").removeprefix("Bearer ") in self.access:
            return None
        return web.json_response({"error": "The access token is invalid"}, status=401)

    async def me(self, request: web.Request) -> web.Response:
        if (denied := self._denied(request)) is not None:
            return denied
        return web.json_response(
            {
                "id": "109",
                "username": "site",
                "acct": "site",
                "display_name": "Our Site",
                "url": "https://social.example/@site",
            }
        )

    async def upload(self, request: web.Request) -> web.Response:
        if (denied := self._denied(request)) is not None:
            return denied
        form = await request.post()
        assert "file" in form
        media_id = str(2200 + len(self.media))
        self.media[media_id] = self.processing_polls  # GETs answering 206 before done
        self.uploads += 1
        return web.json_response({"id": media_id, "type": "image", "url": None}, status=202)

    async def media_status(self, request: web.Request) -> web.Response:
        media_id = request.match_info["id"]
        if self.media[media_id] > 0:
            self.media[media_id] -= 1
            return web.json_response({"id": media_id, "url": None}, status=206)
        return web.json_response({"id": media_id, "url": f"https://files.example/{media_id}.png"})

    async def status(self, request: web.Request) -> web.Response:
        if (denied := self._denied(request)) is not None:
            return denied
        key = request.headers.get("Idempotency-Key", secrets.token_hex(8))
        if key in self.statuses:
            return web.json_response(self.statuses[key])
        if self.failures:
            f = self.failures.pop(0)
            return web.json_response(f.body, status=f.status, headers=f.headers)
        body = await form_or_json(request)
        if any(self.media.get(m, 0) > 0 for m in body["media_ids"]):
            return web.json_response(
                {
                    "error": "Cannot attach files that have not finished processing. Try again in a moment!"
                },
                status=422,
            )
        status_id = str(110000 + len(self.statuses))
        self.statuses[key] = {
            "id": status_id,
            "content": body["status"],
            "media_ids": body["media_ids"],
            "url": f"https://social.example/@site/{status_id}",
        }
        return web.json_response(self.statuses[key])
