"""The nine networks, by key (spec: What the service does 6)."""

from __future__ import annotations

from content.social.linkedin import LinkedIn
from content.social.meta import Facebook, Instagram, Threads
from content.social.networks import Bluesky, Mastodon, Network, X
from content.social.pinterest import Pinterest
from content.social.youtube import YouTube

NETWORKS: dict[str, Network] = {
    n.key: n
    for n in (
        X(),
        Bluesky(),
        Mastodon(),
        LinkedIn(),
        Facebook(),
        Instagram(),
        Threads(),
        Pinterest(),
        YouTube(),
    )
}
