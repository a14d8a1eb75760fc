"""A real argon2id hash with small cost parameters, for rows the tests insert.

Verification reads the cost from the hash itself, so a login against such a row
runs the production code (common/passwords.py) in a few milliseconds instead of
a full-cost check; hashes the services make themselves keep the production
parameters (tests/common/test_crypto.py).
"""

from __future__ import annotations

from argon2 import PasswordHasher


def cheap_hash(password: str) -> str:
    return PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1).hash(password)
