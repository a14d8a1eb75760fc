from __future__ import annotations

import ipaddress

from common.client_ip import resolve_client_ip

PROXIES = (ipaddress.ip_network("10.0.0.0/8"),)


def test_forwarded_for_is_ignored_without_trusted_proxies():
    assert resolve_client_ip("10.0.0.5", "203.0.113.9", ()) == "10.0.0.5"


def test_forwarded_for_is_ignored_from_an_untrusted_peer():
    assert resolve_client_ip("198.51.100.7", "203.0.113.9", PROXIES) == "198.51.100.7"


def test_client_is_first_untrusted_hop_from_the_right():
    # The client forged the leftmost entry; our proxies appended the rest.
    assert resolve_client_ip("10.0.0.5", "1.2.3.4, 203.0.113.9, 10.0.0.6", PROXIES) == "203.0.113.9"


def test_all_hops_trusted_yields_the_leftmost():
    assert resolve_client_ip("10.0.0.5", "10.0.0.7, 10.0.0.6", PROXIES) == "10.0.0.7"


def test_garbage_hop_stops_the_walk():
    assert resolve_client_ip("10.0.0.5", "nonsense, 10.0.0.6", PROXIES) == "10.0.0.6"


def test_ipv6_and_ports():
    nets = (ipaddress.ip_network("::1/128"),)
    assert resolve_client_ip("::1", "[2001:db8::1]:443", nets) == "2001:db8::1"
    assert resolve_client_ip("127.0.0.1", None, PROXIES) == "127.0.0.1"
