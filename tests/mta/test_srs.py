"""mta/srs.py: SRS0/SRS1 in libsrs2's format, reversed only when ours and fresh."""

from __future__ import annotations

import re

import pytest

from mta.srs import DAY, MAX_AGE_DAYS, Srs, SrsError

SECRET = "s" * 40


def at(days: float) -> Srs:
    return Srs(SECRET, clock=lambda: days * DAY)


def local(address: str) -> str:
    return address.rpartition("@")[0]


def test_srs0_has_libsrs2s_shape_and_reverses_in_any_case() -> None:
    srs = at(20_000)
    address = srs.forward("Bob@Sender.example", "fwd.example")
    assert re.fullmatch(
        r"SRS0=[A-Za-z0-9+/]{4}=[A-Z2-7]{2}=Sender\.example=Bob@fwd\.example", address
    )
    assert srs.reverse(local(address)) == "Bob@Sender.example"
    # Some MTAs lower-case the local part on the way back: still ours.
    assert srs.reverse(local(address).lower()) == "bob@sender.example"
    assert srs.forward("", "fwd.example") == ""  # the null sender stays null


def test_a_stale_forged_or_foreign_address_is_refused() -> None:
    address = local(at(20_000).forward("bob@sender.example", "fwd.example"))
    assert at(20_000 + MAX_AGE_DAYS).reverse(address) == "bob@sender.example"
    with pytest.raises(SrsError, match="expired"):
        at(20_000 + MAX_AGE_DAYS + 1).reverse(address)
    with pytest.raises(SrsError, match="hash"):
        at(20_000).reverse("SRS0=AAAA" + address[9:])
    with pytest.raises(SrsError, match="hash"):
        Srs("t" * 40, clock=lambda: 20_000 * DAY).reverse(address)
    with pytest.raises(SrsError):
        at(20_000).reverse("SRS0=abc")


def test_forwarding_an_srs0_address_again_makes_srs1_which_goes_back_one_hop() -> None:
    first = at(20_000).forward("bob@sender.example", "one.example")
    second = at(20_000).forward(first, "two.example")
    assert second.startswith("SRS1=") and "=one.example==" in second
    third = at(20_000).forward(second, "three.example")
    assert third.startswith("SRS1=") and "=one.example==" in third
    assert at(20_000).reverse(local(third)) == first  # back to the first forwarder
    assert at(20_000).reverse(local(second)) == first
