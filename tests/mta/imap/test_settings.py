"""IMAP_* variables: ports off or free, the RFC's idle minimum."""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

import pytest

from common.settings import Settings, SettingsError
from mta.settings import load_mta_settings


def load(env: dict[str, str], **changes: object):  # type: ignore[no-untyped-def]
    return load_mta_settings(replace(Settings(), environ=MappingProxyType(env), **changes))


def test_imap_defaults_follow_the_other_daemons() -> None:
    config = load({})
    assert (config.imap_port, config.imaps_port) == (143, 993)
    assert config.imap_enabled and config.imap_idle_timeout == 1800
    # A pure API node runs no daemons, IMAP included; IMAP_ENABLED decides alone.
    assert not load({}, run_workers=False).imap_enabled
    assert load({"IMAP_ENABLED": "true"}, run_workers=False).imap_enabled


def test_imap_ports_may_be_off_or_free() -> None:
    config = load({"IMAP_PORT": "off", "IMAPS_PORT": "0"})
    assert (config.imap_port, config.imaps_port) == (None, 0)


def test_an_idle_timeout_under_thirty_minutes_is_refused() -> None:
    with pytest.raises(SettingsError):
        load({"IMAP_IDLE_TIMEOUT": "600"})
