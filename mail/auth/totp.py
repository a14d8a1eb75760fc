"""Time-based one-time passwords (RFC 6238) through pyotp.

Codes are accepted one step either side of now (clock drift), compared in
constant time, and never twice: the account remembers the last step used.
"""

from __future__ import annotations

from datetime import datetime

import pyotp
from pyotp.utils import strings_equal

STEP_SECONDS = 30
DRIFT_STEPS = 1


def new_secret() -> str:
    return pyotp.random_base32()


def provisioning_uri(secret: str, email: str, issuer: str) -> str:
    return pyotp.TOTP(secret, interval=STEP_SECONDS).provisioning_uri(
        name=email, issuer_name=issuer
    )


def matching_step(secret: str, code: str, now: datetime) -> int | None:
    """The time step ``code`` belongs to, or None when it matches none near ``now``."""
    code = code.strip().replace(" ", "")
    if not code.isdigit() or len(code) != 6:
        return None
    totp = pyotp.TOTP(secret, interval=STEP_SECONDS)
    current = int(now.timestamp()) // STEP_SECONDS
    found = None
    for step in range(current - DRIFT_STEPS, current + DRIFT_STEPS + 1):
        # Check every candidate so the time taken does not depend on which matched.
        if strings_equal(totp.generate_otp(step), code):
            found = step
    return found
