"""The OAuth server's environment variables, and the gateway's wiring of them."""

from __future__ import annotations

import dataclasses

import pytest

from common.settings import SettingsError
from gateway.services import OAuthService
from oauth.settings import OAuthSettings, load_oauth_settings


def test_defaults():
    assert load_oauth_settings({}) == OAuthSettings()
    assert OAuthSettings().access_token_ttl_seconds == 3600
    assert OAuthSettings().refresh_grace_seconds == 0


def test_values_are_parsed():
    s = load_oauth_settings(
        {
            "OAUTH_SCOPES": "openid, mail.read",
            "OAUTH_ACCESS_TOKEN_TTL_SECONDS": "900",
            "OAUTH_REFRESH_GRACE_SECONDS": "30",
            "OAUTH_AUTHORIZATION_ENDPOINT": "https://mail.example/oauth/consent",
        }
    )
    assert s.scopes == ("openid", "mail.read")
    assert s.access_token_ttl_seconds == 900
    assert s.refresh_grace_seconds == 30
    assert s.authorization_endpoint == "https://mail.example/oauth/consent"


@pytest.mark.parametrize(
    "env",
    [
        {"OAUTH_ACCESS_TOKEN_TTL_SECONDS": "ten"},
        {"OAUTH_ACCESS_TOKEN_TTL_SECONDS": "5"},
        {"OAUTH_REFRESH_GRACE_SECONDS": "-1"},
        {"OAUTH_REFRESH_GRACE_SECONDS": "3600"},
        {"OAUTH_SCOPES": 'openid, bad"scope'},
    ],
)
def test_bad_values_refuse_to_start(env):
    with pytest.raises(SettingsError):
        load_oauth_settings(env)


def test_gateway_passes_settings_into_the_config(runtime):
    settings = dataclasses.replace(
        runtime.settings,
        environ={"OAUTH_REFRESH_GRACE_SECONDS": "20", "OAUTH_SCOPES": "openid"},
    )
    service = OAuthService(dataclasses.replace(runtime, settings=settings))
    config = service.server().config
    assert config.refresh_grace_seconds == 20
    assert tuple(config.scopes) == ("openid",)
    assert config.issuer == settings.public_url + "/oauth"
    assert config.base_path == "/oauth"
    root = service.server(at_root=True).config
    assert root.base_path == ""
    assert root.issuer is None
