"""A password sign-in of a mail app's door (IMAP, POP3, ManageSieve, SMTP
submission), with the budgets the other doors spend.

The address and its password go to mail/directory's ``authenticate`` (an
unknown address costs the same hash work as a wrong password). Before the
password is checked, and counted only when it fails:

* ``mail:auth-ip:<ip>``: AUTH_RATE_LIMIT_PER_SECOND per second, the budget
  the panel's and webmail's sign-in and JMAP's failed logins spend;
* ``mta:auth-failed:<ip>``: SUBMISSION_AUTH_FAILURES per
  SUBMISSION_AUTH_WINDOW seconds, the longer budget of the mail apps' doors.

Both are per client address, and every door spends both through this one
function, so a guesser rotating between protocols gets no more guesses than
one sticking to a single door. There is no budget per address signed in to:
JMAP and webmail have none, and a lockout that only some doors keep stops no
one (the guesser uses another door) while letting anyone lock a mailbox out
of its mail app. Once either is spent every attempt is refused without a
check, right password or not, and the refusal reads the same for an unknown
address and a known one. A password proven lately is not hashed again while its stored hash is
unchanged, and the same sign-in arriving on several connections at once is
checked once (mail/directory :class:`ProvenSignIns`, AUTH_CACHE_SECONDS).
IMAP's OAuth sign-ins (OAUTHBEARER, XOAUTH2) spend
the same budgets through :meth:`SignIn.throttled` and :meth:`SignIn.failed`.
docs/mail.md, "Failed sign-ins", is the rule for every door.
"""

from __future__ import annotations

import base64
import binascii
import enum
import logging
from dataclasses import dataclass

from common.ratelimit import RateLimiter
from common.settings import read_int
from mail import directory
from mta.context import MtaContext

log = logging.getLogger(__name__)


class Refused(enum.Enum):
    INVALID = "invalid"  # the address or password is wrong
    THROTTLED = "throttled"  # a budget is spent: nothing was checked
    UNAVAILABLE = "unavailable"  # the directory could not be asked


@dataclass
class SignIn:
    ctx: MtaContext
    limiter: RateLimiter

    @classmethod
    def of(cls, ctx: MtaContext) -> SignIn:
        return cls(ctx, RateLimiter(ctx.runtime.db, ctx.runtime.clock))

    def _budgets(self, ip: str) -> list[tuple[str, int, float]]:
        config = self.ctx.config
        per_second = read_int(self.ctx.runtime.settings.environ, "AUTH_RATE_LIMIT_PER_SECOND", 5)
        return [
            (f"mail:auth-ip:{ip}", per_second, 1.0),
            (
                f"mta:auth-failed:{ip}",
                config.submission_auth_failures,
                config.submission_auth_window,
            ),
        ]

    async def throttled(self, ip: str) -> bool:
        """Whether a budget of ``ip`` is spent: then nothing is to be checked."""
        for key, limit, window in self._budgets(ip):
            if await self.limiter.exhausted(key, limit, window):
                return True
        return False

    async def failed(self, daemon: str, ip: str, login: str) -> Refused:
        """Count a failed attempt against every budget of ``ip``."""
        for key, limit, window in self._budgets(ip):
            await self.limiter.hit(key, limit, window)
        # Never the password, and the login only as far as its domain.
        log.info("%s: failed login from %s for @%s", daemon, ip, login.rpartition("@")[2])
        return Refused.INVALID

    async def _check(self, login: str, password: str) -> directory.Principal | None:
        async with self.ctx.runtime.db.connection() as conn:
            return await directory.authenticate(conn, login, password, proven=self.ctx.proven)

    async def attempt(
        self, daemon: str, ip: str, login: str, password: str
    ) -> directory.Principal | Refused:
        try:
            if await self.throttled(ip):
                return Refused.THROTTLED
            principal = await self.ctx.proven.once(
                login, password, lambda: self._check(login, password)
            )
            if principal is not None:
                return principal
            return await self.failed(daemon, ip, login)
        except Exception:
            log.exception("%s: authentication lookup failed", daemon)
            return Refused.UNAVAILABLE


def sasl_plain(response: str) -> tuple[str, str] | None:
    """(login, password) of a base64 SASL PLAIN response (RFC 4616), or None.

    An authorization identity other than the login itself is refused: no
    signing in as one address to act as another."""
    try:
        decoded = base64.b64decode(response.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    parts = decoded.split("\x00")
    if len(parts) != 3 or not parts[1] or not parts[2]:
        return None
    authzid, login, password = parts
    if authzid and authzid.lower() != login.lower():
        return None
    return login, password
