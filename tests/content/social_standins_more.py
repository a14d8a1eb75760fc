"""Local stand-ins for LinkedIn, Pinterest, YouTube and Meta's Graph API (Facebook,
Instagram, Threads), each speaking its documented wire format: the OAuth token
endpoint, the post and media endpoints, their error bodies and rate-limit headers.
"""

from __future__ import annotations

import base64
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from tests.content.social_standins import Failure


@dataclass
class StandIn:
    """What every stand-in shares: an authorize page that approves, tokens, queued failures."""

    client_id: str = "cid"
    client_secret: str = "csecret-wxyz"
    codes: dict[str, dict[str, str]] = field(default_factory=dict)
    access: set[str] = field(default_factory=set)
    refresh_tokens: set[str] = field(default_factory=set)
    posts: list[dict[str, Any]] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    refreshed: int = 0

    def fail_next(self, status: int, body: dict[str, Any], **headers: str) -> None:
        self.failures.append(Failure(status, body, headers))

    def failure(self) -> web.Response | None:
        if not self.failures:
            return None
        f = self.failures.pop(0)
        return web.json_response(f.body, status=f.status, headers=f.headers)

    async def authorize(self, request: web.Request) -> web.Response:
        q = request.query
        assert q["client_id"] == self.client_id and q["response_type"] == "code"
        code = secrets.token_hex(8)
        self.codes[code] = dict(q)
        raise web.HTTPFound(
            q["redirect_uri"] + "?" + urlencode({"code": code, "state": q["state"]})
        )

    def issue(self, **extra: Any) -> dict[str, Any]:
        access, refresh = secrets.token_hex(8), secrets.token_hex(8)
        self.access.add(access)
        self.refresh_tokens.add(refresh)
        return {"access_token": access, "refresh_token": refresh, "expires_in": 3600, **extra}

    def bearer_ok(self, request: web.Request) -> bool:
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        return token in self.access or request.query.get("access_token") in self.access


class LinkedInStandIn(StandIn):
    def app(self) -> web.Application:
        app = web.Application(client_max_size=2 * self.PART)  # a whole video part
        app.router.add_get("/oauth/v2/authorization", self.authorize)
        app.router.add_post("/oauth/v2/accessToken", self.token)
        app.router.add_get("/v2/userinfo", self.userinfo)
        app.router.add_post("/rest/images", self.images)
        app.router.add_put("/upload/{id}", self.upload)
        app.router.add_post("/rest/videos", self.videos)
        app.router.add_put("/video-part/{video}/{part}", self.video_part)
        app.router.add_post("/rest/posts", self.create)
        self.uploads: dict[str, int] = {}
        # video urn -> its declared size, the parts received (ETag -> bytes), finalized
        self.videos_sent: dict[str, dict[str, Any]] = {}
        return app

    async def token(self, request: web.Request) -> web.Response:
        form = await request.post()
        if (
            form.get("client_id") != self.client_id
            or form.get("client_secret") != self.client_secret
        ):
            return web.json_response(
                {"error": "invalid_client", "error_description": "Client authentication failed"},
                status=401,
            )
        if (
            form["grant_type"] == "authorization_code"
            and self.codes.pop(str(form["code"]), None) is not None
        ):
            return web.json_response(self.issue(refresh_token_expires_in=31536000))
        if (
            form["grant_type"] == "refresh_token"
            and form.get("refresh_token") in self.refresh_tokens
        ):
            self.refreshed += 1
            return web.json_response(self.issue())
        return web.json_response(
            {
                "error": "invalid_request",
                "error_description": "Unable to retrieve access token: authorization code not found",
            },
            status=400,
        )

    async def userinfo(self, request: web.Request) -> web.Response:
        if not self.bearer_ok(request):
            return web.json_response(
                {"serviceErrorCode": 65600, "message": "Invalid access token", "status": 401},
                status=401,
            )
        return web.json_response({"sub": "782bbtaQ", "name": "Sam Site", "email_verified": True})

    async def images(self, request: web.Request) -> web.Response:
        assert request.query["action"] == "initializeUpload"
        assert (
            request.headers["LinkedIn-Version"]
            and request.headers["X-Restli-Protocol-Version"] == "2.0.0"
        )
        body = await request.json()
        image = f"urn:li:image:C4E{len(self.uploads)}"
        self.uploads[image] = 0
        base = str(request.url.origin())
        return web.json_response(
            {
                "value": {
                    "uploadUrlExpiresAt": 1,
                    "uploadUrl": f"{base}/upload/{image}",
                    "image": image,
                    "owner": body["initializeUploadRequest"]["owner"],
                }
            }
        )

    async def upload(self, request: web.Request) -> web.Response:
        self.uploads[request.match_info["id"]] = len(await request.read())
        return web.Response(status=201)

    # Videos API: initializeUpload answers one upload instruction per 4 MiB part
    # (firstByte/lastByte inclusive); each part's PUT answers an ETag; finalizeUpload
    # takes the uploadToken and the ETags in part order.
    PART = 4 * 1024 * 1024

    async def videos(self, request: web.Request) -> web.Response:
        assert request.headers["LinkedIn-Version"]
        body = await request.json()
        base = str(request.url.origin())
        if request.query["action"] == "initializeUpload":
            ask = body["initializeUploadRequest"]
            size = int(ask["fileSizeBytes"])
            video = f"urn:li:video:C5F{len(self.videos_sent)}"
            self.videos_sent[video] = {
                "owner": ask["owner"],
                "size": size,
                "parts": {},
                "finalized": None,
            }
            return web.json_response(
                {
                    "value": {
                        "uploadUrlsExpireAt": 1,
                        "video": video,
                        "uploadInstructions": [
                            {
                                "uploadUrl": f"{base}/video-part/{video}/{n}",
                                "firstByte": first,
                                "lastByte": min(first + self.PART, size) - 1,
                            }
                            for n, first in enumerate(range(0, size, self.PART))
                        ],
                        "uploadToken": f"token-{video}",
                    }
                }
            )
        assert request.query["action"] == "finalizeUpload"
        done = body["finalizeUploadRequest"]
        sent = self.videos_sent[done["video"]]
        assert done["uploadToken"] == f"token-{done['video']}"
        if list(done["uploadedPartIds"]) != list(sent["parts"]):
            return web.json_response(
                {"status": 400, "message": "Uploaded part ids do not match"}, status=400
            )
        sent["finalized"] = sum(len(part) for part in sent["parts"].values())
        return web.Response(status=200)

    async def video_part(self, request: web.Request) -> web.Response:
        video, part = request.match_info["video"], request.match_info["part"]
        etag = f"/ambry-video/signedId/{video}-{part}"
        self.videos_sent[video]["parts"][etag] = await request.read()
        return web.Response(status=200, headers={"ETag": etag})

    async def create(self, request: web.Request) -> web.Response:
        if not self.bearer_ok(request):
            return web.json_response(
                {
                    "serviceErrorCode": 65601,
                    "message": "The token used in the request has been revoked by the user",
                    "status": 401,
                },
                status=401,
            )
        assert request.headers.get("LinkedIn-Version")
        if (failed := self.failure()) is not None:
            return failed
        body = await request.json()
        urn = f"urn:li:share:{6844785523593134080 + len(self.posts)}"
        self.posts.append(body)
        return web.Response(status=201, headers={"x-restli-id": urn})


class PinterestStandIn(StandIn):
    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/oauth/", self.authorize)
        app.router.add_post("/v5/oauth/token", self.token)
        app.router.add_get("/v5/user_account", self.me)
        app.router.add_get("/v5/boards", self.boards)
        app.router.add_post("/v5/pins", self.pin)
        app.router.add_post("/v5/media", self.register_media)
        app.router.add_get("/v5/media/{id}", self.media_status)
        app.router.add_post("/s3-upload", self.s3_upload)
        # media id -> the parts S3 received, and how many status checks still say processing
        self.media: dict[str, dict[str, Any]] = {}
        self.processing_polls = 0
        return app

    async def token(self, request: web.Request) -> web.Response:
        expected = base64.b64encode(f"{self.client_id}:{self.client_secret}".encode()).decode()
        if request.headers.get("Authorization") != f"Basic {expected}":
            return web.json_response({"code": 1, "message": "Authentication failed."}, status=401)
        form = await request.post()
        if form["grant_type"] == "authorization_code" and str(form["code"]) in self.codes:
            self.codes.pop(str(form["code"]))
            return web.json_response(
                self.issue(
                    token_type="bearer", scope="boards:read,pins:read,pins:write,user_accounts:read"
                )
            )
        return web.json_response({"code": 1, "message": "Invalid request body"}, status=400)

    async def me(self, request: web.Request) -> web.Response:
        if not self.bearer_ok(request):
            return web.json_response({"code": 2, "message": "Authentication failed."}, status=401)
        return web.json_response(
            {
                "account_type": "BUSINESS",
                "username": "oursite",
                "id": "549755885175",
                "business_name": "Our Site",
            }
        )

    async def boards(self, request: web.Request) -> web.Response:
        return web.json_response(
            {"items": [{"id": "549755885175", "name": "Spring"}], "bookmark": None}
        )

    async def register_media(self, request: web.Request) -> web.Response:
        """POST /v5/media: registers a video; answers an S3 presigned POST to upload it to."""
        if not self.bearer_ok(request):
            return web.json_response({"code": 2, "message": "Authentication failed."}, status=401)
        assert (await request.json()) == {"media_type": "video"}
        media_id = str(5209445300 + len(self.media))
        self.media[media_id] = {"status": "registered", "fields": None, "polls": 0}
        return web.json_response(
            {
                "media_id": media_id,
                "media_type": "video",
                "upload_url": f"{request.url.origin()}/s3-upload",
                "upload_parameters": {
                    "x-amz-date": "20261126T000000Z",
                    "x-amz-signature": "sig",
                    "x-amz-security-token": "tok",
                    "x-amz-algorithm": "AWS4-HMAC-SHA256",
                    "key": f"uploads/{media_id}.mp4",
                    "policy": "cG9saWN5",
                    "x-amz-credential": "cred",
                    "Content-Type": "multipart/form-data",
                },
            },
            status=201,
        )

    async def s3_upload(self, request: web.Request) -> web.Response:
        """S3's POST Object: the policy fields first, the file last; no bearer token; 204."""
        assert "Authorization" not in request.headers
        fields: dict[str, Any] = {}
        reader = await request.multipart()
        async for part in reader:
            assert "file" not in fields, "S3 ignores fields after the file"
            fields[str(part.name)] = await part.read()  # type: ignore[union-attr]
        media_id = fields["key"].decode().removeprefix("uploads/").removesuffix(".mp4")
        self.media[media_id].update(fields=fields, status="processing", polls=self.processing_polls)
        return web.Response(status=204)

    async def media_status(self, request: web.Request) -> web.Response:
        if not self.bearer_ok(request):
            return web.json_response({"code": 2, "message": "Authentication failed."}, status=401)
        media = self.media[request.match_info["id"]]
        if media["status"] == "processing" and media["polls"] > 0:
            media["polls"] -= 1
        elif media["status"] == "processing":
            media["status"] = "succeeded"
        return web.json_response(
            {"media_id": request.match_info["id"], "media_type": "video", "status": media["status"]}
        )

    async def pin(self, request: web.Request) -> web.Response:
        if not self.bearer_ok(request):
            return web.json_response({"code": 2, "message": "Authentication failed."}, status=401)
        if (failed := self.failure()) is not None:
            return failed
        body = await request.json()
        source = body["media_source"]
        if source["source_type"] == "video_id" and (
            self.media.get(source["media_id"], {}).get("status") != "succeeded"
        ):
            return web.json_response(
                {"code": 2999, "message": "Video media is not ready yet."}, status=400
            )
        self.posts.append(body)
        return web.json_response(
            {"id": str(813744226420795884 + len(self.posts)), **body}, status=201
        )


class YouTubeStandIn(StandIn):
    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/o/oauth2/v2/auth", self.authorize)
        app.router.add_post("/token", self.token)
        app.router.add_get("/youtube/v3/channels", self.channels)
        app.router.add_post("/upload/youtube/v3/videos", self.start_upload)
        app.router.add_put("/upload/session/{id}", self.finish_upload)
        self.sessions: dict[str, dict[str, Any]] = {}
        return app

    async def token(self, request: web.Request) -> web.Response:
        form = await request.post()
        if form.get("client_secret") != self.client_secret:
            return web.json_response(
                {"error": "invalid_client", "error_description": "Unauthorized"}, status=401
            )
        if form["grant_type"] == "authorization_code":
            asked = self.codes.pop(str(form["code"]), None)
            import hashlib

            digest = hashlib.sha256(str(form.get("code_verifier")).encode()).digest()
            if (
                asked is None
                or asked.get("code_challenge")
                != base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
            ):
                return web.json_response(
                    {"error": "invalid_grant", "error_description": "Bad Request"}, status=400
                )
            assert asked["access_type"] == "offline"
            return web.json_response(self.issue(token_type="Bearer", scope=asked["scope"]))
        if (
            form["grant_type"] == "refresh_token"
            and form.get("refresh_token") in self.refresh_tokens
        ):
            self.refreshed += 1
            body = self.issue(token_type="Bearer")
            del body["refresh_token"]  # Google keeps the refresh token
            return web.json_response(body)
        return web.json_response(
            {"error": "invalid_grant", "error_description": "Token has been expired or revoked."},
            status=400,
        )

    async def channels(self, request: web.Request) -> web.Response:
        assert request.query["mine"] == "true"
        return web.json_response(
            {
                "kind": "youtube#channelListResponse",
                "items": [
                    {
                        "kind": "youtube#channel",
                        "id": "UC_x5XG1OV2P6uZZ5FSM9Ttw",
                        "snippet": {"title": "Our Site", "customUrl": "@oursite"},
                    }
                ],
            }
        )

    async def start_upload(self, request: web.Request) -> web.Response:
        if not self.bearer_ok(request):
            return web.json_response(
                {
                    "error": {
                        "code": 401,
                        "message": "Request had invalid authentication credentials.",
                        "errors": [{"reason": "authError"}],
                    }
                },
                status=401,
            )
        if (failed := self.failure()) is not None:
            return failed
        assert request.query["uploadType"] == "resumable"
        sid = secrets.token_hex(6)
        self.sessions[sid] = {
            "metadata": await request.json(),
            "length": int(request.headers["X-Upload-Content-Length"]),
        }
        return web.Response(
            status=200, headers={"Location": f"{request.url.origin()}/upload/session/{sid}"}
        )

    async def finish_upload(self, request: web.Request) -> web.Response:
        session = self.sessions.pop(request.match_info["id"])
        data = await request.read()
        assert len(data) == session["length"]
        video_id = f"dQw4w9WgXc{len(self.posts)}"
        self.posts.append(session["metadata"])
        return web.json_response({"kind": "youtube#video", "id": video_id, **session["metadata"]})


class FacebookStandIn(StandIn):
    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/v21.0/dialog/oauth", self.authorize)
        app.router.add_get("/v21.0/oauth/access_token", self.token)
        app.router.add_get("/v21.0/me/accounts", self.pages)
        app.router.add_post("/v21.0/{page}/photos", self.photo)
        app.router.add_post("/v21.0/{page}/feed", self.feed)
        app.router.add_post("/v21.0/{page}/videos", self.video)
        self.photos: list[dict[str, Any]] = []
        self.videos: list[dict[str, Any]] = []
        return app

    async def token(self, request: web.Request) -> web.Response:
        q = request.query
        if q.get("client_secret") != self.client_secret:
            return web.json_response(
                {
                    "error": {
                        "message": "Error validating client secret.",
                        "type": "OAuthException",
                        "code": 1,
                    }
                },
                status=400,
            )
        if "code" in q and self.codes.pop(q["code"], None) is not None:
            return web.json_response(self.issue(token_type="bearer"))
        if q.get("grant_type") == "fb_exchange_token" and q.get("fb_exchange_token") in self.access:
            return web.json_response(self.issue(token_type="bearer", expires_in=5183944))
        return web.json_response(
            {
                "error": {
                    "message": "Invalid verification code format.",
                    "type": "OAuthException",
                    "code": 100,
                }
            },
            status=400,
        )

    async def pages(self, request: web.Request) -> web.Response:
        assert request.query["access_token"] in self.access
        page_token = secrets.token_hex(8)
        self.access.add(page_token)
        return web.json_response(
            {
                "data": [
                    {
                        "id": "1020304050",
                        "name": "Our Site Page",
                        "access_token": page_token,
                        "category": "Website",
                    }
                ]
            }
        )

    def _check(self, form: Any) -> web.Response | None:
        if form.get("access_token") not in self.access:
            return web.json_response(
                {
                    "error": {
                        "message": "Error validating access token: The session has been invalidated because the user changed their password.",
                        "type": "OAuthException",
                        "code": 190,
                        "error_subcode": 460,
                        "fbtrace_id": "A1",
                    }
                },
                status=400,
            )
        return self.failure()

    async def photo(self, request: web.Request) -> web.Response:
        form = await request.post()
        if (bad := self._check(form)) is not None:
            return bad
        assert form["published"] == "false" and str(form["url"]).startswith("http")
        self.photos.append(dict(form))
        return web.json_response({"id": f"9{len(self.photos)}"})

    async def feed(self, request: web.Request) -> web.Response:
        form = await request.post()
        if (bad := self._check(form)) is not None:
            return bad
        self.posts.append(dict(form))
        return web.json_response({"id": f"{request.match_info['page']}_{len(self.posts)}"})

    async def video(self, request: web.Request) -> web.Response:
        """Page video by URL: file_url (Facebook fetches it), description, title; {"id"}."""
        form = await request.post()
        if (bad := self._check(form)) is not None:
            return bad
        if not str(form.get("file_url", "")).startswith("http"):
            return web.json_response(
                {
                    "error": {
                        "message": "(#100) Invalid parameter: file_url",
                        "type": "OAuthException",
                        "code": 100,
                    }
                },
                status=400,
            )
        self.videos.append({"page": request.match_info["page"], **dict(form)})
        return web.json_response({"id": str(10158000000 + len(self.videos))})


class ContainerStandIn(StandIn):
    """Instagram (version v21.0, media/media_publish, status_code) or Threads
    (v1.0, threads/threads_publish, status): short-lived then long-lived tokens,
    containers that finish after ``processing_polls`` status reads."""

    def __init__(
        self, version: str, create: str, publish: str, status_field: str, exchange_grant: str
    ) -> None:
        super().__init__()
        self.version, self.create, self.publish_path = version, create, publish
        self.status_field, self.exchange_grant = status_field, exchange_grant
        self.containers: dict[str, dict[str, Any]] = {}
        self.processing_polls = 0

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/oauth/authorize", self.authorize)
        app.router.add_post("/oauth/access_token", self.token)
        app.router.add_get("/access_token", self.long_lived)
        app.router.add_get("/refresh_access_token", self.refresh)
        app.router.add_get(f"/{self.version}/me", self.me)
        app.router.add_post(f"/{self.version}/{{user}}/{self.create}", self.container)
        app.router.add_post(f"/{self.version}/{{user}}/{self.publish_path}", self.publish)
        app.router.add_get(f"/{self.version}/{{id}}", self.status)
        return app

    async def token(self, request: web.Request) -> web.Response:
        form = await request.post()
        if (
            form.get("client_secret") != self.client_secret
            or self.codes.pop(str(form.get("code")), None) is None
        ):
            return web.json_response(
                {
                    "error_type": "OAuthException",
                    "code": 400,
                    "error_message": "Invalid authorization code",
                },
                status=400,
            )
        short = secrets.token_hex(8)
        self.access.add(short)
        return web.json_response({"access_token": short, "user_id": 17841405793187218})

    async def long_lived(self, request: web.Request) -> web.Response:
        q = request.query
        assert q["grant_type"] == self.exchange_grant and q["client_secret"] == self.client_secret
        assert q["access_token"] in self.access
        long = secrets.token_hex(10)
        self.access.add(long)
        return web.json_response(
            {"access_token": long, "token_type": "bearer", "expires_in": 5183944}
        )

    async def refresh(self, request: web.Request) -> web.Response:
        if request.query["access_token"] not in self.access:
            return web.json_response(
                {
                    "error": {
                        "message": "Error validating access token",
                        "type": "OAuthException",
                        "code": 190,
                    }
                },
                status=400,
            )
        self.refreshed += 1
        fresh = secrets.token_hex(10)
        self.access.add(fresh)
        return web.json_response(
            {"access_token": fresh, "token_type": "bearer", "expires_in": 5183944}
        )

    def _denied(self, token: Any) -> web.Response | None:
        if token in self.access:
            return None
        return web.json_response(
            {
                "error": {
                    "message": "Error validating access token: Session has expired",
                    "type": "OAuthException",
                    "code": 190,
                    "error_subcode": 463,
                }
            },
            status=400,
        )

    async def me(self, request: web.Request) -> web.Response:
        if (bad := self._denied(request.query.get("access_token"))) is not None:
            return bad
        return web.json_response(
            {"id": "17841405793187218", "user_id": "17841405793187218", "username": "oursite"}
        )

    async def container(self, request: web.Request) -> web.Response:
        form = await request.post()
        if (bad := self._denied(form.get("access_token"))) is not None:
            return bad
        if (failed := self.failure()) is not None:
            return failed
        if form.get("media_type") == "CAROUSEL" and (bad := self._carousel(form)) is not None:
            return bad
        cid = str(17889455560051444 + len(self.containers))
        self.containers[cid] = {**dict(form), "polls": self.processing_polls}
        return web.json_response({"id": cid})

    def _carousel(self, form: Any) -> web.Response | None:
        """A carousel names 2 to 10 (Instagram) or 20 (Threads) item containers, each
        made with is_carousel_item=true; its caption rides on the carousel, not the items."""
        most = 20 if self.create == "threads" else 10
        children = str(form.get("children", "")).split(",")
        ok = 2 <= len(children) <= most and all(
            self.containers.get(c, {}).get("is_carousel_item") == "true" for c in children
        )
        if ok:
            return None
        return web.json_response(
            {
                "error": {
                    "message": "(#100) The parameter children is invalid.",
                    "type": "OAuthException",
                    "code": 100,
                }
            },
            status=400,
        )

    async def status(self, request: web.Request) -> web.Response:
        if (bad := self._denied(request.query.get("access_token"))) is not None:
            return bad
        ident = request.match_info["id"]
        if request.query.get("fields") == "permalink":
            return web.json_response(
                {"id": ident, "permalink": f"https://example.social/p/{ident}"}
            )
        box = self.containers[ident]
        if box["polls"] > 0:
            box["polls"] -= 1
            return web.json_response({"id": ident, self.status_field: "IN_PROGRESS"})
        return web.json_response({"id": ident, self.status_field: "FINISHED"})

    async def publish(self, request: web.Request) -> web.Response:
        form = await request.post()
        if (bad := self._denied(form.get("access_token"))) is not None:
            return bad
        box = self.containers[str(form["creation_id"])]
        assert box["polls"] == 0, "published before the container finished"
        assert box.get("is_carousel_item") != "true", "a carousel item published on its own"
        self.posts.append(box)
        return web.json_response({"id": str(90010000 + len(self.posts))})
