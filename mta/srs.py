"""The Sender Rewriting Scheme (SRS) of redirected mail, as libsrs2 and postsrsd write it.

A Sieve ``redirect`` sends a stranger's message on from our server. Left as
it was, its envelope sender (bob@gmail.example) fails the receiver's SPF
check, since our address is not Gmail's. Rewritten, it is an address of the
redirecting mailbox's domain, whose SPF names us and whose MX is us:

    SRS0=HHHH=TT=gmail.example=bob@our-domain.example

``TT`` is the day (two base32 characters, days since the epoch mod 1024),
``HHHH`` the first four base64 characters of HMAC-SHA1 over the lower-cased
timestamp, domain and local part, keyed by a key derived from SECRET: Shevek's
scheme, so the addresses read like postsrsd's. A sender that is already an
SRS address of another forwarder becomes SRS1 (``SRS1=HHHH=first-forwarder==
HHHH=TT=domain=local@...``), so a bounce walks back through every hop.

A bounce to such an address comes back to our inbound daemon, which checks
the hash and the age (:data:`MAX_AGE_DAYS`) with :func:`reverse` and sends
the bounce on to the original sender (mta/smtp/data.py). Anything not signed
by us, or too old, is an unknown user: the scheme is not an open relay.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Callable

from common.crypto import constant_time_equals, derive_key

SRS0 = "SRS0"
SRS1 = "SRS1"
SEPARATOR = "="
HASH_LENGTH = 4
BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
DAY = 86400
# libsrs2's default: a bounce may come back up to 21 days after the redirect.
MAX_AGE_DAYS = 21
_TIME_SLOTS = 1024  # two base32 characters: 10 bits of days


class SrsError(ValueError):
    """Not an address we rewrote, or one too old to accept back."""


def is_srs(local: str) -> bool:
    head = local[:5].upper()
    return head in (SRS0 + SEPARATOR, SRS1 + SEPARATOR)


class Srs:
    """Forward and reverse addresses with one key (``SECRET``'s, purpose ``mta.srs``)."""

    def __init__(self, secret: str, clock: Callable[[], float] = time.time) -> None:
        self._key = derive_key(secret, "mta.srs")
        self._clock = clock

    def forward(self, sender: str, domain: str) -> str:
        """``sender`` rewritten under ``domain``; the null sender stays null."""
        local, at, sender_domain = sender.rpartition("@")
        if not at or not local:
            return sender  # <> (a bounce being redirected) or no domain: nothing to sign
        if local[:5].upper() == SRS0 + SEPARATOR:
            # SRS0 of another forwarder: SRS1 keeps its host and its SRS0 part.
            user = local[4:]  # "=HHHH=TT=domain=local"
            return self._srs1(sender_domain, user, domain)
        if local[:5].upper() == SRS1 + SEPARATOR:
            # Already SRS1: keep its first forwarder and SRS0 part, sign them anew.
            first, sep, user = local[5:].partition(SEPARATOR)[2].partition(SEPARATOR)
            if not (sep and first and user.startswith(SEPARATOR)):
                raise SrsError("malformed SRS1 address")
            return self._srs1(first, user, domain)
        stamp = self._stamp()
        digest = self._hash(stamp, sender_domain, local)
        return f"{SRS0}={digest}={stamp}={sender_domain}={local}@{domain}"

    def reverse(self, local: str) -> str:
        """The address an SRS local part of ours stands for (SrsError if it is not ours)."""
        tag = local[:5].upper()
        if tag == SRS0 + SEPARATOR:
            parts = local[5:].split(SEPARATOR, 3)
            if len(parts) != 4 or not all(parts):
                raise SrsError("malformed SRS0 address")
            digest, stamp, domain, user = parts
            self._check(digest, stamp, domain, user)
            self._check_age(stamp)
            return f"{user}@{domain}"
        if tag == SRS1 + SEPARATOR:
            digest, sep, rest = local[5:].partition(SEPARATOR)
            first, sep2, user = rest.partition(SEPARATOR)
            if not (sep and sep2 and first and user.startswith(SEPARATOR)):
                raise SrsError("malformed SRS1 address")
            self._check(digest, first, user)
            # Back to the forwarder before us, which reverses its own SRS0.
            return f"{SRS0}{user}@{first}"
        raise SrsError("not an SRS address")

    def _srs1(self, first: str, user: str, domain: str) -> str:
        return f"{SRS1}={self._hash(first, user)}={first}={user}@{domain}"

    def _stamp(self) -> str:
        days = int(self._clock() // DAY) % _TIME_SLOTS
        return BASE32[(days >> 5) & 31] + BASE32[days & 31]

    def _check_age(self, stamp: str) -> None:
        try:
            then = BASE32.index(stamp[0].upper()) << 5 | BASE32.index(stamp[1].upper())
        except (ValueError, IndexError):
            raise SrsError("bad SRS timestamp") from None
        if len(stamp) != 2:
            raise SrsError("bad SRS timestamp")
        now = int(self._clock() // DAY) % _TIME_SLOTS
        if (now - then) % _TIME_SLOTS > MAX_AGE_DAYS:
            raise SrsError("SRS address expired")

    def _hash(self, *parts: str) -> str:
        mac = hmac.new(self._key, digestmod=hashlib.sha1)
        for part in parts:
            mac.update(part.lower().encode())
        return base64.b64encode(mac.digest()).decode()[:HASH_LENGTH]

    def _check(self, digest: str, *parts: str) -> None:
        # libsrs2 compares without case: some MTAs lower-case the local part.
        if not constant_time_equals(self._hash(*parts).lower(), digest.lower()):
            raise SrsError("SRS hash does not match")
