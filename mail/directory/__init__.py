"""The directory: who exists, and what their plan allows.

mail owns accounts, domains, addresses, their credentials and the DKIM keys
(schema ``mail``); the protocol servers (mta: SMTP, submission, JMAP, and
the IMAP server next) read them only through this package, never with SQL
of their own, the way Stalwart's directory crate stands between its
protocol servers and the account data. It is a leaf: it imports only
common/, so ``import mta.smtp.rcpt`` loads no other module of mail
(``mail/__init__.py`` loads the service lazily; tests/test_boundaries.py
counts them). mail's own modules use it too: billing's gates are
:mod:`mail.directory.plans` with the service's error shape around it.

* :mod:`.recipients`: :func:`lookup_recipient` (RCPT TO, once per recipient
  on the hot path) and :func:`address_quota`.
* :mod:`.principals`: :func:`authenticate` (SMTP AUTH, JMAP), with
  :class:`ProvenSignIns` remembering the mail apps' proven passwords, and
  :func:`account_addresses` (JMAP over OAuth).
* :mod:`.keys`: :func:`signing_key` and :func:`signing_keys` (outbound DKIM; the
  latter one statement for the From domains of a claim's messages).
* :mod:`.plans`: the plan's features and limits, :func:`reserve_sends` /
  :func:`return_sends`, :func:`push_allowed`; the one module reading plans.
* :mod:`.storage`: :func:`account_used_bytes`, the plan's storage usage.
"""

from __future__ import annotations

from mail.directory.keys import SigningKey, key_sealer, signing_key, signing_keys
from mail.directory.plans import push_allowed, reserve_sends, return_sends
from mail.directory.principals import (
    Principal,
    ProvenSignIns,
    account_addresses,
    authenticate,
)
from mail.directory.recipients import (
    SUBADDRESS_DELIMITER,
    Lookup,
    Recipient,
    address_id_of,
    address_quota,
    lookup_recipient,
)
from mail.directory.storage import account_used_bytes

__all__ = [
    "SUBADDRESS_DELIMITER",
    "Lookup",
    "Principal",
    "ProvenSignIns",
    "Recipient",
    "SigningKey",
    "account_addresses",
    "account_used_bytes",
    "address_id_of",
    "address_quota",
    "authenticate",
    "key_sealer",
    "lookup_recipient",
    "push_allowed",
    "reserve_sends",
    "return_sends",
    "signing_key",
    "signing_keys",
]
