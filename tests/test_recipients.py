"""common/recipients.py: the one recipient check every sending path calls."""

from __future__ import annotations

import pytest

from common.recipients import AddressRefused, check_recipient


@pytest.mark.parametrize(
    ("given", "address"),
    [
        ("x@receiver.test", "x@receiver.test"),  # RFC 6761 6.2: not special
        ("ops@test", "ops@test"),
        ("Ann@Mail.Example.ORG", "Ann@mail.example.org"),
        ("jörg@bücher.example", "jörg@xn--bcher-kva.example"),
    ],
)
def test_accepted(given: str, address: str) -> None:
    assert check_recipient(given).address == address


@pytest.mark.parametrize(
    ("given", "reason"),
    [
        ("x@host.invalid", "RFC 6761 6.4"),
        ("x@localhost", "RFC 6761 6.3"),
        ("x@db.localhost", "RFC 6761 6.3"),
        ("x@hidden.onion", "RFC 7686"),
        ("x@printer.local", "RFC 6762"),
        ("x@1.0.0.127.in-addr.arpa", "RFC 3172"),
        ("x@[192.0.2.1]", "address literals"),
    ],
)
def test_refused_on_purpose_with_the_reason(given: str, reason: str) -> None:
    with pytest.raises(AddressRefused) as refused:
        check_recipient(given)
    assert refused.value.on_purpose and reason in str(refused.value)


@pytest.mark.parametrize(
    "given",
    ["a..b@example.com", "x@intranet", '"a b"@example.com', "x@", "@x.test", "x\x00@a.test"],
)
def test_malformed(given: str) -> None:
    with pytest.raises(AddressRefused) as refused:
        check_recipient(given)
    assert not refused.value.on_purpose
    assert str(refused.value).isprintable()
