"""argon2id password hashing (argon2-cffi), run off the event loop.

Hashing is deliberately slow, so the coroutine versions run it in the default
executor; a burst of sign-ins never stalls other requests.
"""

from __future__ import annotations

import asyncio

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

# argon2-cffi's defaults follow RFC 9106's second recommended option (64 MiB, t=3).
_hasher = PasswordHasher()

# A real hash, with the hasher's parameters, of a random password nobody kept:
# verifying against it costs what a real check costs, so "no such user" and
# "wrong password" take the same time. Written out rather than hashed at import,
# which cost every process (each gateway start, each CLI) a full argon2 hash.
DUMMY_HASH = "$argon2id$v=19$m=65536,t=3,p=4$pMMpTGIvlGl3R09RQyCvww$ZbF7ldsxXE/+KWevkawc3fkybpmNF5+1KbB7BoBj+pg"

# PASSWORD_HASH_COST=test (the test harness sets it: tests/conftest.py) makes
# the gateway call use_test_cost(); production refuses the variable
# (common/settings.py).
TEST_COST_ENV = "PASSWORD_HASH_COST"


def use_test_cost() -> None:
    """Hash with small argon2id parameters, for the test suite only: the same code,
    without a second of CPU per hash and per check (the suite makes hundreds).
    tests/common/test_crypto.py holds the production parameters in a process
    that never calls this."""
    global _hasher, DUMMY_HASH
    _hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    DUMMY_HASH = _hasher.hash("dummy password that matches nothing 9c1f")


def hash_password_sync(password: str) -> str:
    return _hasher.hash(password)


def verify_password_sync(password_hash: str | None, password: str) -> bool:
    try:
        return _hasher.verify(password_hash or DUMMY_HASH, password) and bool(password_hash)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def needs_rehash(password_hash: str) -> bool:
    return _hasher.check_needs_rehash(password_hash)


async def hash_password(password: str) -> str:
    return await asyncio.get_running_loop().run_in_executor(None, hash_password_sync, password)


async def verify_password(password_hash: str | None, password: str) -> bool:
    """Verify; with no hash (unknown user) do the same work against a dummy and fail."""
    return await asyncio.get_running_loop().run_in_executor(
        None, verify_password_sync, password_hash, password
    )
