"""Fixtures of the gateway process tests, and the loopback DNS server of the mta tests."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from common.embedded_pg import postmaster_process, shut_down
from tests.mta.conftest import dns_server  # noqa: F401


@pytest.fixture
def data_dir() -> Iterator[Path]:
    """A DATA_DIR whose embedded postgres is stopped after the test, whatever happened.

    Outside pytest's basetemp: a concurrent pytest run resets the basetemp root
    to mode 0700, which the unprivileged user postgres runs as (under root)
    then cannot traverse.
    """
    home = Path(tempfile.mkdtemp(prefix="svc-test-gw-"))
    path = home / "data"
    yield path
    leftover = postmaster_process((path / "pgdata").resolve())
    if leftover is not None:
        shut_down(leftover)
    shutil.rmtree(home, ignore_errors=True)
