"""YouTube: one video per post through the Data API v3 resumable upload.

Google OAuth 2.0 with PKCE, offline access (a refresh token), the channel
from channels?mine=true; the upload opens a session
(uploadType=resumable, metadata as JSON) and PUTs the bytes to the session
URL it returns. The first line of the post is the title, the rest (and the
link) the description. quotaExceeded and rateLimitExceeded are worth a
retry later; other 403s are refusals.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from content.social.networks import (
    App,
    Http,
    Network,
    Outgoing,
    Profile,
    Published,
    Tokens,
)
from content.social.rules import sent_text

_LATER = {"quotaExceeded", "rateLimitExceeded", "userRateLimitExceeded", "backendError"}


class YouTube(Network):
    key, label = "youtube", "YouTube"
    supported = True
    env_fallback = True
    token_auth = "body"
    defaults: ClassVar[Mapping[str, str]] = {
        "authorize": "https://accounts.google.com/o/oauth2/v2/auth",
        "token": "https://oauth2.googleapis.com/token",
        "api": "https://www.googleapis.com",
    }
    scopes = (
        "https://www.googleapis.com/auth/youtube.upload",
        "https://www.googleapis.com/auth/youtube.readonly",
    )
    extra_authorize: ClassVar[Mapping[str, str]] = {"access_type": "offline", "prompt": "consent"}
    guide = (
        "Open console.cloud.google.com, create a project and enable the YouTube Data API v3.",
        "Configure the OAuth consent screen, then create an OAuth client ID of type Web application.",
        "Add the callback URL shown here as an authorised redirect URI and copy the client ID and secret.",
    )

    def classify(self, status: int, body: Any) -> str | None:
        errors = body.get("error", {}).get("errors", []) if isinstance(body, dict) else []
        reasons = {e.get("reason") for e in errors if isinstance(e, dict)}
        if reasons & _LATER:
            return "retry"
        return None

    async def exchange(
        self, http: Http, app: App, *, code: str, verifier: str, redirect_uri: str, base: str = ""
    ) -> list[tuple[Tokens, Profile]]:
        tokens = await self.code_tokens(http, app, code, verifier, redirect_uri)
        found = await http.call(
            "GET",
            f"{self.endpoint(app, 'api')}/youtube/v3/channels?part=snippet&mine=true",
            headers={"Authorization": f"Bearer {tokens.access}"},
        )
        out = []
        for channel in found.get("items", []):
            snippet = channel.get("snippet", {})
            handle = snippet.get("customUrl") or snippet.get("title") or channel["id"]
            out.append((tokens, Profile(channel["id"], handle, snippet.get("title", ""))))
        return out

    async def publish(
        self, http: Http, app: App, account: Profile, tokens: Tokens, post: Outgoing
    ) -> Published:
        api = self.endpoint(app, "api")
        video = post.media[0]
        title, _, rest = post.text.partition("\n")
        metadata = {
            "snippet": {
                "title": title.strip(),
                "description": sent_text(self.rules, rest.strip(), post.link),
            },
            "status": {"privacyStatus": "public", "selfDeclaredMadeForKids": False},
        }
        auth = {"Authorization": f"Bearer {tokens.access}"}
        _, answer = await http.request(
            "POST",
            f"{api}/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status",
            json=metadata,
            headers=auth
            | {
                "X-Upload-Content-Type": video.type,
                "X-Upload-Content-Length": str(len(video.data)),
            },
        )
        session = answer["Location"]
        done = await http.call(
            "PUT", session, data=video.data, headers=auth | {"Content-Type": video.type}
        )
        return Published(done["id"], f"https://www.youtube.com/watch?v={done['id']}")
