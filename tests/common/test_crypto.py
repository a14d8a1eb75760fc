from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest

from common.crypto import Sealer, SealError, constant_time_equals, sha256_hex
from common.ids import prefixed_token, random_id, short_id
from common.passwords import (
    DUMMY_HASH,
    TEST_COST_ENV,
    hash_password,
    needs_rehash,
    verify_password,
)
from tests.conftest import ROOT

SECRET = "s" * 40


def test_sha256_hex_matches_hashlib():
    assert sha256_hex("token") == hashlib.sha256(b"token").hexdigest()
    assert sha256_hex(b"token") == sha256_hex("token")


def test_constant_time_equals():
    assert constant_time_equals("abc", "abc")
    assert not constant_time_equals("abc", "abd")
    assert not constant_time_equals("abc", "abcd")


def test_seal_round_trip_and_fresh_nonce():
    sealer = Sealer(SECRET, "dkim")
    a, b = sealer.seal("private key"), sealer.seal("private key")
    assert a != b
    assert "private key" not in a
    assert sealer.open(a) == "private key"


def test_sealed_value_does_not_open_for_another_purpose_or_secret():
    sealed = Sealer(SECRET, "dkim").seal("private key")
    with pytest.raises(SealError):
        Sealer(SECRET, "social").open(sealed)
    with pytest.raises(SealError):
        Sealer("t" * 40, "dkim").open(sealed)


def test_tampered_value_is_refused():
    sealer = Sealer(SECRET, "dkim")
    sealed = sealer.seal("private key")
    flipped = sealed[:-3] + ("A" if sealed[-3] != "A" else "B") + sealed[-2:]
    with pytest.raises(SealError):
        sealer.open(flipped)
    with pytest.raises(SealError):
        sealer.open("not sealed")


def test_ids_are_url_safe_and_distinct():
    ids = {random_id() for _ in range(100)}
    assert len(ids) == 100
    assert all(
        len(i) == 43
        and set(i) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        for i in ids
    )
    assert len(short_id()) == 12
    assert prefixed_token("svc_").startswith("svc_")


async def test_password_hash_is_argon2id_and_verifies():
    hashed = await hash_password("correct horse")
    assert hashed.startswith("$argon2id$")
    assert await verify_password(hashed, "correct horse")
    assert not await verify_password(hashed, "wrong horse")
    # An unknown user (no hash) never verifies, whatever the password.
    assert not await verify_password(None, "correct horse")


def test_the_dummy_hash_costs_what_a_real_one_does():
    """Unknown users are verified against DUMMY_HASH: it carries the hasher's own
    parameters (else "no such user" would answer faster than "wrong password")."""
    assert DUMMY_HASH.startswith("$argon2id$")
    assert not needs_rehash(DUMMY_HASH)


def test_outside_the_test_harness_hashes_have_rfc_9106_parameters():
    """The harness hashes cheaply (PASSWORD_HASH_COST=test, tests/conftest.py); a
    process without it, as in production, hashes and verifies at full cost."""
    script = (
        "from common import passwords as p\n"
        "h = p.hash_password_sync('correct horse')\n"
        "print(h)\n"
        "print(p.verify_password_sync(h, 'correct horse'), p.verify_password_sync(h, 'wrong'))\n"
        "print(p.verify_password_sync(None, 'correct horse'), p.needs_rehash(p.DUMMY_HASH))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != TEST_COST_ENV}
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert out[0].startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    assert out[1:] == ["True False", "False False"]
