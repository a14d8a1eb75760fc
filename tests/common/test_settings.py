from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from common.settings import SettingsError, load_settings


def env(tmp_path: Path, **values: str) -> dict[str, str]:
    return {"DATA_DIR": str(tmp_path), **values}


def test_defaults_match_the_spec(tmp_path):
    s = load_settings(env(tmp_path))
    assert (s.port, s.host, s.public_url, s.db_pool_size) == (
        4300,
        "0.0.0.0",
        "http://localhost:4300",
        5,
    )
    assert s.database_url is None
    assert s.app_env == "development"
    assert s.pgdata_dir == tmp_path / "pgdata"


def test_development_secret_is_generated_once_and_kept(tmp_path):
    first = load_settings(env(tmp_path)).secret
    assert len(first) >= 32
    assert (tmp_path / "secret").stat().st_mode & 0o077 == 0
    assert load_settings(env(tmp_path)).secret == first


def test_production_refuses_a_short_secret(tmp_path):
    with pytest.raises(SettingsError, match="SECRET must be at least 32"):
        load_settings(env(tmp_path, APP_ENV="production", SECRET="short"))


def test_production_refuses_a_missing_secret(tmp_path):
    with pytest.raises(SettingsError, match="SECRET"):
        load_settings(env(tmp_path, NODE_ENV="production"))
    assert not (tmp_path / "secret").exists()


def test_production_refuses_the_test_suites_cheap_password_hashing(tmp_path):
    with pytest.raises(SettingsError, match="PASSWORD_HASH_COST"):
        load_settings(
            env(tmp_path, APP_ENV="production", SECRET="x" * 40, PASSWORD_HASH_COST="test")
        )


def test_production_entry_point_refuses_development(tmp_path):
    with pytest.raises(SettingsError, match="development"):
        load_settings(env(tmp_path, NODE_ENV="development", SECRET="x" * 40), production=True)


def test_node_env_is_honoured_and_app_env_wins(tmp_path):
    assert load_settings(env(tmp_path, NODE_ENV="production", SECRET="x" * 32)).is_production
    s = load_settings(env(tmp_path, NODE_ENV="production", APP_ENV="test"))
    assert s.app_env == "test"


def test_unknown_environment_is_refused(tmp_path):
    with pytest.raises(SettingsError, match="APP_ENV"):
        load_settings(env(tmp_path, APP_ENV="prod"))


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("PORT", "http", "PORT must be an integer"),
        ("PORT", "70000", "PORT must be at most"),
        ("DB_POOL_SIZE", "0", "DB_POOL_SIZE must be at least 1"),
        ("PUBLIC_URL", "localhost:4300", "PUBLIC_URL must be an absolute"),
        ("TRUSTED_PROXIES", "10.0.0.0/8,nonsense", "TRUSTED_PROXIES"),
        ("HOST_MOUNTS", "cms.example.com=blog", "HOST_MOUNTS"),
        ("RUN_WORKERS", "maybe", "RUN_WORKERS must be true or false"),
    ],
)
def test_malformed_values_fail_with_one_clear_line(tmp_path, name, value, message):
    with pytest.raises(SettingsError, match=message) as info:
        load_settings(env(tmp_path, **{name: value}))
    assert "\n" not in str(info.value)


def test_trusted_proxies_and_host_mounts_parse(tmp_path):
    s = load_settings(
        env(
            tmp_path, TRUSTED_PROXIES="10.0.0.0/8, 127.0.0.1", HOST_MOUNTS="CMS.example.com=content"
        )
    )
    assert s.trusted_proxies == (
        ipaddress.ip_network("10.0.0.0/8"),
        ipaddress.ip_network("127.0.0.1/32"),
    )
    assert s.host_mounts == (("cms.example.com", "content"),)


def test_operations_settings_default_to_text_logs_loopback_metrics_and_no_drain(tmp_path):
    s = load_settings(env(tmp_path))
    assert (s.log_format, s.access_log, s.shutdown_drain, s.metrics_token) == (
        "text",
        False,
        0.0,
        "",
    )
    assert [str(n) for n in s.metrics_allow] == ["127.0.0.0/8", "::1/128"]


def test_operations_settings_parse(tmp_path):
    s = load_settings(
        env(
            tmp_path,
            LOG_FORMAT="JSON",
            ACCESS_LOG="true",
            SHUTDOWN_DRAIN="7.5",
            METRICS_ALLOW="10.0.0.0/8, 2001:db8::/32",
            METRICS_TOKEN="t" * 20,
        )
    )
    assert (s.log_format, s.access_log, s.shutdown_drain) == ("json", True, 7.5)
    assert [str(n) for n in s.metrics_allow] == ["10.0.0.0/8", "2001:db8::/32"]
    # Empty: no address may scrape, only the token.
    assert load_settings(env(tmp_path, METRICS_ALLOW="")).metrics_allow == ()


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("LOG_FORMAT", "xml", "LOG_FORMAT must be one of text, json"),
        ("SHUTDOWN_DRAIN", "-1", "SHUTDOWN_DRAIN must be 0 or more"),
        ("METRICS_TOKEN", "short", "METRICS_TOKEN must be at least 16"),
        ("METRICS_ALLOW", "10.0.0.0/8,nope", "METRICS_ALLOW: 'nope' is not an IP"),
    ],
)
def test_operations_settings_refuse_bad_values(tmp_path, name, value, message):
    with pytest.raises(SettingsError, match=message):
        load_settings(env(tmp_path, **{name: value}))
