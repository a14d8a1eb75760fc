"""Fixtures the gateway tests borrow: the loopback DNS server of the mta tests."""

from tests.mta.conftest import dns_server  # noqa: F401
