"""The one CSRF predicate mail and the CMS share (common/csrf.py), issue 11 item 9."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import make_mocked_request

from common.csrf import is_cross_site, origin_of

PUBLIC = "http://panel.example:4300"


def post(headers: dict[str, str], host: str = "panel.example:4300") -> bool:
    request = make_mocked_request("POST", "/api/x", headers={"Host": host, **headers})
    return is_cross_site(request, (PUBLIC,))


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://panel.example:4300"},  # the right host and port, another scheme
        {"Origin": "http://panel.example:4301"},  # another port
        {"Origin": "http://panel.example"},  # the default port is another port
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Origin": "not a url"},
        {"Referer": "https://panel.example:4300/settings"},
        {"Referer": "http://evil.example/page"},
        {"Referer": "garbage"},
        {"Sec-Fetch-Site": "same-site"},
        {"Sec-Fetch-Site": "cross-site", "Referer": "http://evil.example/"},
        # Sec-Fetch-Site says cross-site; an Origin that is ours does not lie about it.
        {"Sec-Fetch-Site": "cross-site", "Origin": "https://panel.example:4300"},
    ],
)
def test_other_origins_are_cross_site(headers):
    assert post(headers)


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://panel.example:4300"},
        {"Origin": "HTTP://Panel.Example:4300"},
        {"Referer": "http://panel.example:4300/settings?tab=1"},
        {"Sec-Fetch-Site": "same-origin"},
        {"Sec-Fetch-Site": "none"},
        {},  # no browser header at all: not a browser
    ],
)
def test_our_own_origin_passes(headers):
    assert not post(headers)


def test_the_requests_own_origin_is_allowed_by_scheme_and_host():
    # Served at another host (a host mount): its own http origin passes, https does not.
    assert not post({"Origin": "http://mail.example"}, host="mail.example")
    assert not post({"Origin": "http://mail.example:80"}, host="mail.example")
    assert post({"Origin": "https://mail.example"}, host="mail.example")


def test_reads_are_never_cross_site():
    request = make_mocked_request("GET", "/", headers={"Origin": "http://evil.example"})
    assert not is_cross_site(request, (PUBLIC,))


def test_an_authorization_header_alone_exempts_nothing():
    assert post({"Authorization": "Bearer whatever", "Origin": "http://evil.example"})


def test_origin_of_normalises_scheme_host_and_default_port():
    assert origin_of("HTTPS://Example.COM:443/path?q") == "https://example.com"
    assert origin_of("http://example.com:8080/") == "http://example.com:8080"
    assert origin_of("javascript:alert(1)") is None
    assert origin_of("https://example.com:notaport") is None
