from __future__ import annotations

import hashlib

import pytest

from common.crypto import Sealer, SealError, constant_time_equals, sha256_hex
from common.ids import prefixed_token, random_id, short_id
from common.passwords import DUMMY_HASH, hash_password, needs_rehash, verify_password

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
    """Unknown users are verified against DUMMY_HASH: it must carry the hasher's
    own parameters (else "no such user" answers faster than "wrong password")."""
    assert DUMMY_HASH.startswith("$argon2id$")
    assert not needs_rehash(DUMMY_HASH)
