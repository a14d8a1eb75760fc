"""The one syntax check of an address mail is sent to, shared by every sending path.

Submission (RCPT TO), the sending API (and webmail, which builds its messages
with the API's fields), JMAP EmailSubmission and Sieve redirects all call
:func:`check_recipient`, so an address one path takes another cannot refuse.

The grammar is email-validator's (RFC 5321/5322 dot-atom local parts, RFC
6531 UTF-8, IDNA 2008 domains, the length limits) with ``test_environment``
on: RFC 6761 6.2 says applications should not treat ``.test`` names as
special, and operators and tests use them (``x@receiver.test``). The other
special-use names email-validator rejects are refused here on purpose, each
with its reason (:data:`REFUSED_TLDS`), and so are address literals: mail
goes to a domain, found through its MX, never to an address a client names.
Deliverability (DNS) is the queue's business, not this check's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from email_validator import EmailNotValidError, validate_email

# Special-use top-level names no mail is sent to, and why (the message a caller sees).
REFUSED_TLDS = {
    "invalid": ".invalid names are reserved never to exist (RFC 6761 6.4)",
    "localhost": "localhost names are this server itself (RFC 6761 6.3)",
    "onion": ".onion names are reachable only over Tor (RFC 7686), which this server does not use",
    "local": ".local names exist only on a local network, through multicast DNS (RFC 6762)",
    "arpa": ".arpa is the internet's infrastructure namespace (RFC 3172), not a mail domain",
}
LITERAL_REFUSED = "address literals are not accepted; send to a domain name"
_UNPRINTABLE = re.compile(r"[^\x20-\x7e]")


class AddressRefused(ValueError):
    """Why an address is not one mail may be sent to; ``str()`` is the reason.

    ``on_purpose``: the address is well formed, but its domain is one mail is
    never sent to (the reason names it); otherwise the address is malformed.
    """

    def __init__(self, reason: str, *, on_purpose: bool = False) -> None:
        super().__init__(reason)
        self.on_purpose = on_purpose


@dataclass(frozen=True)
class Recipient:
    local: str  # as given (NFC); non-ASCII needs SMTPUTF8
    domain: str  # lower-case IDNA ASCII (A-labels)

    @property
    def address(self) -> str:
        return f"{self.local}@{self.domain}"

    @property
    def smtputf8(self) -> bool:
        return not self.local.isascii()


def check_recipient(address: str) -> Recipient:
    """The address checked and normalised, or :class:`AddressRefused` saying why."""
    domain = address.rpartition("@")[2].strip().rstrip(".").lower()
    if domain.startswith("[") and domain.endswith("]"):
        raise AddressRefused(LITERAL_REFUSED, on_purpose=True)
    tld = domain.rpartition(".")[2]
    if tld in REFUSED_TLDS:
        raise AddressRefused(REFUSED_TLDS[tld], on_purpose=True)
    try:
        checked = validate_email(
            address,
            check_deliverability=False,
            test_environment=True,
            allow_smtputf8=True,
            allow_domain_literal=False,
        )
    except EmailNotValidError as exc:
        raise AddressRefused(_printable(str(exc))) from None
    return Recipient(checked.local_part, checked.ascii_domain.lower())


def _printable(reason: str) -> str:
    """The library's reason, safe in a one-line SMTP reply or an error body."""
    return _UNPRINTABLE.sub("?", reason)[:200]
