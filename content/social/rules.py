"""Each network's own rules for a post, checked when the post is saved (spec: not when sent).

The numbers are the networks' documented limits (docs/content.md, "Social
publishing", lists them with their sources); how the text is counted is the
network's own way: X weighs code points and counts every link as 23, Mastodon
counts characters with links as 23, Bluesky counts graphemes, YouTube's
description counts bytes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import regex  # type: ignore[import-untyped]  # grapheme clusters (\X); no stubs published

from content.errors import FieldError

URL = re.compile(r"https?://\S+")
# twitter-text v3: these code points weigh 1, every other one 2; a link weighs 23.
_X_LIGHT = ((0, 4351), (8192, 8205), (8208, 8223), (8242, 8247))


@dataclass(frozen=True)
class Rules:
    max_text: int
    counting: str  # weighted, links23, characters, graphemes, bytes
    max_images: int
    max_videos: int
    media_required: bool = False
    # How the post's link travels: appended to the text, or a field of its own.
    link: str = "text"
    image_types: tuple[str, ...] = ("image/jpeg", "image/png", "image/gif", "image/webp")
    video_types: tuple[str, ...] = ("video/mp4", "video/quicktime")
    max_image_bytes: int | None = None
    # YouTube: the first line is the title.
    max_title: int | None = None

    def as_json(self) -> dict[str, object]:
        return {
            "maxText": self.max_text,
            "counting": self.counting,
            "maxImages": self.max_images,
            "maxVideos": self.max_videos,
            "mediaRequired": self.media_required,
            "link": self.link,
            "imageTypes": list(self.image_types),
            "videoTypes": list(self.video_types),
            "maxImageBytes": self.max_image_bytes,
            "maxTitle": self.max_title,
        }


RULES: dict[str, Rules] = {
    "x": Rules(280, "weighted", 4, 1, max_image_bytes=5_000_000),
    "bluesky": Rules(
        300,
        "graphemes",
        4,
        1,
        image_types=("image/jpeg", "image/png", "image/webp"),
        max_image_bytes=1_000_000,
    ),
    "mastodon": Rules(500, "links23", 4, 1, max_image_bytes=16_000_000),
    "linkedin": Rules(3000, "characters", 20, 1),
    "facebook": Rules(63206, "characters", 10, 1, link="field"),
    "instagram": Rules(2200, "characters", 10, 1, media_required=True, link="dropped"),
    "threads": Rules(500, "characters", 20, 1),
    "pinterest": Rules(500, "characters", 1, 1, media_required=True, link="field"),
    "youtube": Rules(5000, "bytes", 0, 1, media_required=True, max_title=100),
}


def sent_text(rules: Rules, text: str, link: str | None) -> str:
    """The text a network receives: the link appended where it travels in the text."""
    if link and rules.link == "text" and link not in text:
        return f"{text}\n\n{link}" if text else link
    return text


def length(rules: Rules, text: str) -> int:
    if rules.counting == "weighted":
        total = 0
        for piece in URL.split(text):
            total += sum(1 if any(a <= ord(c) <= b for a, b in _X_LIGHT) else 2 for c in piece)
        return total + 23 * len(URL.findall(text))
    if rules.counting == "links23":
        return len(URL.sub("x" * 23, text))
    if rules.counting == "characters":
        return len(text)
    if rules.counting == "graphemes":
        return len(regex.findall(r"\X", text))
    return len(text.encode())


@dataclass(frozen=True)
class MediaInfo:
    id: str
    type: str
    size: int


def check(
    network: str, text: str, link: str | None, media: Sequence[MediaInfo]
) -> list[FieldError]:
    """Every way ``network`` would refuse this post, each naming the field and the network."""
    rules = RULES[network]
    problems: list[FieldError] = []
    body = sent_text(rules, text, link)
    counted = length(rules, body)
    if counted > rules.max_text:
        problems.append(
            FieldError(
                "text",
                f"{network}: at most {rules.max_text} {_unit(rules)}, this is {counted}",
            )
        )
    if rules.max_title is not None:
        title = text.split("\n", 1)[0]
        if not title.strip():
            problems.append(FieldError("text", f"{network}: the first line is the title"))
        elif len(title) > rules.max_title:
            problems.append(
                FieldError(
                    "text", f"{network}: the title (first line) is {rules.max_title} at most"
                )
            )
    images = [m for m in media if m.type.startswith("image/")]
    videos = [m for m in media if m.type.startswith("video/")]
    for i, item in enumerate(media):
        if item not in images and item not in videos:
            problems.append(FieldError(f"media.{i}", f"{network}: only images or a video"))
        elif (item in images and item.type not in rules.image_types) or (
            item in videos and item.type not in rules.video_types
        ):
            problems.append(FieldError(f"media.{i}", f"{network}: does not take {item.type}"))
        elif item in images and rules.max_image_bytes and item.size > rules.max_image_bytes:
            problems.append(
                FieldError(
                    f"media.{i}", f"{network}: an image is {rules.max_image_bytes} bytes at most"
                )
            )
    if images and videos:
        problems.append(FieldError("media", f"{network}: images or a video, not both"))
    if len(videos) > rules.max_videos:
        problems.append(FieldError("media", f"{network}: one video per post"))
    if len(images) > rules.max_images:
        what = "takes no images" if rules.max_images == 0 else f"{rules.max_images} images at most"
        problems.append(FieldError("media", f"{network}: {what}"))
    if rules.media_required and not media:
        kind = "a video" if rules.max_images == 0 else "an image or a video"
        problems.append(FieldError("media", f"{network}: needs {kind}"))
    return problems


def _unit(rules: Rules) -> str:
    return {
        "weighted": "weighted characters (links count 23)",
        "links23": "characters (links count 23)",
        "characters": "characters",
        "graphemes": "graphemes",
        "bytes": "bytes",
    }[rules.counting]
