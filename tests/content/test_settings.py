"""The CMS's environment variables are validated in one place."""

from __future__ import annotations

import pytest

from common.settings import Settings, SettingsError, load_settings
from content.settings import load_content_settings


def _content(env: dict[str, str]):
    return load_content_settings(Settings(environ=env))


def test_defaults():
    cs = _content({})
    assert cs.max_upload_bytes == 25 * 1024 * 1024
    assert cs.webhook_allow_private is False
    assert cs.storage_driver == "local"
    assert cs.bootstrap is None


def test_media_files_default_beside_mail_blobs_not_among_them(tmp_path):
    # Same-bytes sharing must never let a media delete remove a mail blob.
    cs = load_content_settings(Settings(data_dir=tmp_path, environ={}))
    assert cs.storage_local_dir == tmp_path / "media"
    assert cs.storage_local_dir != Settings(data_dir=tmp_path).blob_dir


def test_values_are_parsed():
    cs = _content(
        {
            "DELIVERY_ORIGINS": "https://site.example, http://localhost:3000",
            "WEBHOOK_ALLOW_PRIVATE": "true",
            "MAX_UPLOAD_BYTES": "1000",
            "PLUGIN_AUTOENABLE": "seo, forms",
            "BOOTSTRAP_EMAIL": "Owner@Example.com",
            "BOOTSTRAP_PASSWORD": "long enough pw",
            "AI_OAUTH_OPENAI_CLIENT_ID": "cid",
            "AI_OAUTH_OPENAI_SCOPES": "a, b",
            "SOCIAL_OAUTH_MASTODON_TOKEN_URL": "https://m.example/oauth/token",
        }
    )
    assert cs.delivery_origins == ("https://site.example", "http://localhost:3000")
    assert cs.webhook_allow_private is True
    assert cs.max_upload_bytes == 1000
    assert cs.plugin_autoenable == ("seo", "forms")
    assert cs.plugin_dir is None
    assert cs.bootstrap is not None and cs.bootstrap.email == "Owner@example.com"
    assert cs.bootstrap.name == "Owner"
    assert cs.ai_oauth["openai"].client_id == "cid"
    assert cs.ai_oauth["openai"].scopes == ("a", "b")
    assert cs.social_oauth["mastodon"].token_url == "https://m.example/oauth/token"


@pytest.mark.parametrize(
    ("env", "fragment"),
    [
        ({"MAX_UPLOAD_BYTES": "lots"}, "MAX_UPLOAD_BYTES"),
        ({"WEBHOOK_ALLOW_PRIVATE": "maybe"}, "WEBHOOK_ALLOW_PRIVATE"),
        ({"STORAGE_DRIVER": "ftp"}, "STORAGE_DRIVER"),
        ({"STORAGE_DRIVER": "s3"}, "S3_BUCKET"),
        ({"DELIVERY_ORIGINS": "site.example"}, "DELIVERY_ORIGINS"),
        ({"DELIVERY_ORIGINS": "https://site.example/path"}, "DELIVERY_ORIGINS"),
        ({"BOOTSTRAP_EMAIL": "a@example.com"}, "BOOTSTRAP_PASSWORD"),
        ({"BOOTSTRAP_EMAIL": "nope", "BOOTSTRAP_PASSWORD": "long enough"}, "BOOTSTRAP_EMAIL"),
        ({"BOOTSTRAP_EMAIL": "a@example.com", "BOOTSTRAP_PASSWORD": "short"}, "BOOTSTRAP_PASSWORD"),
        ({"AI_OAUTH_X_TOKEN_URL": "not a url"}, "AI_OAUTH_X_TOKEN_URL"),
        ({"PLUGIN_DIR": "/no/such/plugins"}, "PLUGIN_DIR '/no/such/plugins' is not a directory"),
        ({"PLUGIN_AUTOENABLE": "seo, Forms!"}, "PLUGIN_AUTOENABLE lists plugin names"),
    ],
)
def test_bad_values_refuse_to_start(env, fragment):
    with pytest.raises(SettingsError, match=fragment):
        _content(env)


@pytest.mark.parametrize(
    "env",
    [
        {"NODE_ENV": "production", "SECRET": "short"},
        {"NODE_ENV": "development", "SECRET": "x" * 40},
    ],
)
def test_production_refuses_short_secret_or_development(env):
    with pytest.raises(SettingsError):
        load_settings(env, production=True)


def test_the_gateway_refuses_to_start_on_a_bad_cms_variable(gateway_process, database_url):
    gw = gateway_process(
        "--only",
        "content",
        env={"DATABASE_URL": database_url, "MAX_UPLOAD_BYTES": "lots"},
        wait=False,
    )
    assert gw.proc.wait(timeout=60) == 1
    assert "refusing to start: MAX_UPLOAD_BYTES must be an integer" in gw.log()
    assert "Traceback" not in gw.log()
