"""What one client may hold or waste: connections, and errors before it is slowed and dropped.

Postfix's answers, kept: a cap on connections per process and per client
address (its process limit and ``smtpd_client_connection_count_limit``), and
an error count per session (``smtpd_soft_error_limit``, ``smtpd_error_sleep_time``,
``smtpd_hard_error_limit``, with ``smtpd_junk_command_limit``'s commands past the
limit counted as errors) that a delivered message clears. Across sessions
and daemon processes, refused recipients per client address are counted in
the shared rate limiter (common/ratelimit.py), as Postfix's anvil counts per
client: a prober that reconnects does not start again from zero.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class ConnectionLimits:
    """Open connections of one listener (one process), in all and per client address."""

    max_total: int
    max_per_ip: int
    total: int = 0
    per_ip: Counter[str] = field(default_factory=Counter)

    def admit(self, ip: str) -> bool:
        """Count a new connection in, or refuse it (counted nowhere)."""
        if self.total >= self.max_total or self.per_ip[ip] >= self.max_per_ip:
            return False
        self.total += 1
        self.per_ip[ip] += 1
        return True

    def release(self, ip: str) -> None:
        self.total -= 1
        self.per_ip[ip] -= 1
        if self.per_ip[ip] <= 0:
            del self.per_ip[ip]  # a Counter of every address ever seen would only grow


@dataclass(frozen=True)
class ErrorLimits:
    soft: int
    hard: int
    sleep: float
    # NOOP, RSET, VRFY and HELP a session may send before each one counts as an
    # error (Postfix's smtpd_junk_command_limit): they succeed, so without this
    # a client sending one every few minutes would hold its connection forever.
    junk: int = 100


def is_error(reply: str) -> bool:
    # 421 is our own goodbye (a limit reached, a timeout), not the client's error.
    return reply[:1] in ("4", "5") and not reply.startswith("421")
