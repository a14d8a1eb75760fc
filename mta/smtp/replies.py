"""Every reply the inbound daemon sends, with its enhanced status code (RFC 3463)."""

from __future__ import annotations

OK = "250 2.0.0 OK"
SENDER_OK = "250 2.1.0 Sender OK"
RECIPIENT_OK = "250 2.1.5 Recipient OK"


def queued(queue_id: str) -> str:
    # Sent only after the blob and every row are committed.
    return f"250 2.0.0 OK: stored as {queue_id}"


# A HELO/EHLO name with a control character or bytes that are not UTF-8: no
# domain or address literal (RFC 5321 4.1.1.1), and unusable in our trace fields.
BAD_HELO_SYNTAX = "501 5.5.2 Syntax error in the HELO/EHLO hostname"
BAD_SENDER_SYNTAX = "553 5.1.7 Bad sender address syntax"
BAD_RECIPIENT_SYNTAX = "553 5.1.3 Bad recipient address syntax"


def bare_line_end(kind: str) -> str:
    """A lone LF or CR in the message (RFC 5321 2.3.8): Postfix's reply when
    smtpd_forbid_bare_newline is ``reject``; permanent, resending will not fix it."""
    return f"550 5.5.2 Error: bare <{kind}> received"


def recipient_refused(reason: str, *, on_purpose: bool) -> str:
    """Submission's answer to a recipient common/recipients.py refuses: malformed
    (553 5.1.3), or a destination mail is never sent to (550 5.1.2, RFC 3463
    "bad destination system address"), each with the reason."""
    if on_purpose:
        return f"550 5.1.2 Recipient address rejected: {reason}"
    return f"{BAD_RECIPIENT_SYNTAX}: {reason}"


UNKNOWN_USER = "550 5.1.1 No such user here"
# An SRS address (a redirect's envelope sender) takes bounces only.
SRS_NOT_A_BOUNCE = "550 5.7.1 This forwarding address accepts only bounces (a null sender)"
RELAY_DENIED = "554 5.7.1 Relay access denied: this domain is not hosted here"
OVER_QUOTA = "452 4.2.2 Mailbox full, try again later"
# The account's plan (storage_bytes over all its addresses) is used up: 552 as
# the issue asks, with the mailbox-full enhanced code (RFC 3463 X.2.2).
PLAN_STORAGE_FULL = "552 5.2.2 Mailbox full: the account's storage allowance is used up"
# Submission over the plan's monthly sends (RFC 3463 X.7.1: not allowed by policy).
SENDS_EXHAUSTED = "550 5.7.1 Monthly sending allowance of the account's plan is used up"
TOO_MANY_RECIPIENTS = "452 4.5.3 Too many recipients"
MESSAGE_TOO_BIG = "552 5.3.4 Message size exceeds fixed maximum message size"
TEMPORARY_FAILURE = "451 4.3.0 Temporary failure storing the message, try again later"
LOOKUP_FAILURE = "451 4.3.0 Temporary lookup failure, try again later"
DMARC_REJECT = "550 5.7.1 Rejected by the sender domain's DMARC policy"
NEED_RECIPIENTS = "554 5.5.1 No valid recipients"
# RFC 5322 2.1 / RFC 6532 3.2: message text has no NUL; nor does 7bit or 8bit MIME
# content (RFC 2045 2.7, 2.8), and BINARYMIME is not offered. Permanent: a sender
# retrying would send the same bytes again.
NUL_IN_CONTENT = "554 5.6.0 Message contains a NUL character, which mail text cannot hold"


# 421: the server closes the connection right after it (RFC 5321 3.8), so a client
# retries later, from its queue, without counting it as a failure of the message.
def too_many_connections(hostname: str) -> str:
    return f"421 4.7.0 {hostname} Error: too many connections, try again later"


def too_many_errors(hostname: str) -> str:
    return f"421 4.7.0 {hostname} Error: too many errors, try again later"


def too_many_unknown_recipients(hostname: str) -> str:
    return f"421 4.7.0 {hostname} Error: too many unknown recipients from your address, try later"


# Submission (RFC 6409, RFC 4954): AUTH, the sender rule, the queue.
AUTH_INVALID = "535 5.7.8 Authentication credentials invalid"
AUTH_LOOKUP_FAILED = "454 4.7.0 Temporary authentication failure, try again later"
SENDER_NOT_ALLOWED = "550 5.7.1 Sender address rejected: {login} may not send as <{address}>"
FROM_NOT_ALLOWED = (
    "550 5.7.1 From header rejected: {login} may not send as {address}; send from your own address"
)
NO_FROM = "550 5.7.1 The message has no From address"
QUEUE_FAILED = "451 4.3.0 Temporary failure queueing the message, try again later"


def too_many_auth_failures(hostname: str) -> str:
    return f"421 4.7.0 {hostname} Error: too many failed logins from your address, try later"


def submitted(message_id: str) -> str:
    return f"250 2.0.0 OK: queued as {message_id}"
