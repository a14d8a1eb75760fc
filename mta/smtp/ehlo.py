"""EHLO: what we advertise."""

from __future__ import annotations


def extensions(responses: list[str]) -> list[str]:
    """aiosmtpd's list (SIZE, 8BITMIME, SMTPUTF8, STARTTLS) plus PIPELINING, minus AUTH.

    aiosmtpd reads one command line at a time and answers in order, which is
    all RFC 2920 asks of a server. AUTH belongs to the submission port, never
    to inbound port 25.
    """
    kept = [r for r in responses if not r[4:].upper().startswith("AUTH")]
    last = kept.pop()  # "250 HELP": the final line keeps its space
    return [*kept, "250-PIPELINING", "250-ENHANCEDSTATUSCODES", last]
