"""LinkedIn: member posts through the versioned Posts API (/rest/posts).

OAuth 2.0 (3-legged; PKCE is for native apps only, so a web app sends its
secret), OpenID userinfo for the member id, images through
/rest/images?action=initializeUpload and a PUT of the bytes, a video through
/rest/videos initialize, part PUTs (their ETags) and finalize. Every /rest
call names its version in the LinkedIn-Version header.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

from content.social.networks import (
    App,
    Attachment,
    Http,
    Network,
    Outgoing,
    Profile,
    Published,
    PublishError,
    Tokens,
)
from content.social.rules import sent_text

API_VERSION = "202405"
# The "little text" format of commentary: these characters are markup unless escaped.
_RESERVED = re.compile(r"([\\|{}@\[\]()<>#*_~])")


def little_text(text: str) -> str:
    return _RESERVED.sub(r"\\\1", text)


class LinkedIn(Network):
    key, label = "linkedin", "LinkedIn"
    supported = True
    env_fallback = True
    pkce = False
    token_auth = "body"
    defaults: ClassVar[Mapping[str, str]] = {
        "authorize": "https://www.linkedin.com/oauth/v2/authorization",
        "token": "https://www.linkedin.com/oauth/v2/accessToken",
        "api": "https://api.linkedin.com",
    }
    scopes = ("openid", "profile", "w_member_social")
    guide = (
        "Open linkedin.com/developers, create an app (it needs a company Page).",
        "Under Products add 'Share on LinkedIn' and 'Sign In with LinkedIn using OpenID Connect'.",
        "Under Auth add the callback URL shown here and copy the Client ID and Primary Client Secret.",
    )

    def _headers(self, tokens: Tokens) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {tokens.access}",
            "LinkedIn-Version": API_VERSION,
            "X-Restli-Protocol-Version": "2.0.0",
        }

    async def exchange(
        self, http: Http, app: App, *, code: str, verifier: str, redirect_uri: str, base: str = ""
    ) -> list[tuple[Tokens, Profile]]:
        tokens = await self.code_tokens(http, app, code, verifier, redirect_uri)
        me = await http.call(
            "GET",
            f"{self.endpoint(app, 'api')}/v2/userinfo",
            headers={"Authorization": f"Bearer {tokens.access}"},
        )
        return [(tokens, Profile(me["sub"], me.get("name") or me["sub"], me.get("name", "")))]

    async def _image(
        self, http: Http, api: str, headers: dict[str, str], owner: str, item: Attachment
    ) -> str:
        init = await http.call(
            "POST",
            f"{api}/rest/images?action=initializeUpload",
            json={"initializeUploadRequest": {"owner": owner}},
            headers=headers,
        )
        value = init["value"]
        await http.call(
            "PUT",
            value["uploadUrl"],
            data=item.data,
            headers={"Authorization": headers["Authorization"]},
        )
        return str(value["image"])

    async def _video(
        self, http: Http, api: str, headers: dict[str, str], owner: str, item: Attachment
    ) -> str:
        init = await http.call(
            "POST",
            f"{api}/rest/videos?action=initializeUpload",
            json={
                "initializeUploadRequest": {
                    "owner": owner,
                    "fileSizeBytes": len(item.data),
                    "uploadCaptions": False,
                    "uploadThumbnail": False,
                }
            },
            headers=headers,
        )
        value = init["value"]
        etags = []
        for part in value["uploadInstructions"]:
            chunk = item.data[part["firstByte"] : part["lastByte"] + 1]
            _, answer = await http.request(
                "PUT",
                part["uploadUrl"],
                data=chunk,
                headers={"Authorization": headers["Authorization"]},
            )
            etags.append(answer.get("ETag", ""))
        await http.call(
            "POST",
            f"{api}/rest/videos?action=finalizeUpload",
            json={
                "finalizeUploadRequest": {
                    "video": value["video"],
                    "uploadToken": value.get("uploadToken", ""),
                    "uploadedPartIds": etags,
                }
            },
            headers=headers,
        )
        return str(value["video"])

    async def publish(
        self, http: Http, app: App, account: Profile, tokens: Tokens, post: Outgoing
    ) -> Published:
        api = self.endpoint(app, "api")
        headers = self._headers(tokens)
        owner = f"urn:li:person:{account.remote_id}"
        body: dict[str, Any] = {
            "author": owner,
            "commentary": little_text(sent_text(self.rules, post.text, post.link)),
            "visibility": "PUBLIC",
            "distribution": {
                "feedDistribution": "MAIN_FEED",
                "targetEntities": [],
                "thirdPartyDistributionChannels": [],
            },
            "lifecycleState": "PUBLISHED",
            "isReshareDisabledByAuthor": False,
        }
        videos = [m for m in post.media if m.type.startswith("video/")]
        if videos:
            body["content"] = {
                "media": {"id": await self._video(http, api, headers, owner, videos[0])}
            }
        elif len(post.media) == 1:
            urn = await self._image(http, api, headers, owner, post.media[0])
            body["content"] = {"media": {"id": urn, "altText": post.media[0].alt}}
        elif post.media:
            images = [
                {"id": await self._image(http, api, headers, owner, m), "altText": m.alt}
                for m in post.media
            ]
            body["content"] = {"multiImage": {"images": images}}
        _, answer = await http.request("POST", f"{api}/rest/posts", json=body, headers=headers)
        post_urn = answer.get("x-restli-id")
        if not post_urn:
            raise PublishError("retry", "LinkedIn accepted the post but named no id")
        return Published(post_urn, f"https://www.linkedin.com/feed/update/{post_urn}/")
