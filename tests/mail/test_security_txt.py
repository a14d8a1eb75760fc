"""GET /.well-known/security.txt (RFC 9116)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from common.settings import SettingsError
from mail.settings import load_mail_settings


async def test_security_txt_defaults(client):
    resp = await client.get("/.well-known/security.txt")
    assert resp.status == 200
    assert resp.headers["Content-Type"] == "text/plain; charset=utf-8"
    # The test clock reads 2030-01-01T12:00Z: expiry is 180 days ahead, at midnight.
    assert await resp.text() == (
        "Contact: mailto:security@localhost\n"
        "Expires: 2030-06-30T00:00:00Z\n"
        "Preferred-Languages: en\n"
        "Canonical: http://localhost:4300/.well-known/security.txt\n"
    )


async def test_security_txt_from_settings(make_client):
    client = await make_client(
        {
            "SECURITY_CONTACT": "sec@example.com, https://example.com/report",
            "SECURITY_TXT_EXPIRES": "2031-01-01T00:00:00+00:00",
            "SECURITY_POLICY_URL": "https://example.com/policy",
        }
    )
    text = await (await client.get("/.well-known/security.txt")).text()
    assert text.splitlines()[:4] == [
        "Contact: mailto:sec@example.com",
        "Contact: https://example.com/report",
        "Expires: 2031-01-01T00:00:00Z",
        "Policy: https://example.com/policy",
    ]


def test_bad_settings_are_refused_at_start(settings):
    for env in (
        {"SECURITY_TXT_EXPIRES": "next year"},
        {"SECURITY_TXT_EXPIRES": "2031-01-01T00:00:00"},
        {"RATE_LIMIT_PER_SECOND": "0"},
        {"SIGNUPS_ENABLED": "maybe"},
    ):
        with pytest.raises(SettingsError):
            load_mail_settings(replace(settings, environ=env))
