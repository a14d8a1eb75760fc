"""SIGKILL the real gateway mid-transfer, start it again: the import resumes, nothing twice.

Two `python -m gateway` processes in turn over the test's database and blob
store (real clock, real job worker). The first is killed while it imports;
its transfer keeps state ``running`` with a heartbeat that goes stale after
TRANSFER_STALE_SECONDS, and the second process's sweep takes it over and
resumes from each folder's last imported UID.
"""

from __future__ import annotations

import json
import signal
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import TEST_SECRET
from tests.mail.factories import signed_in
from tests.mail.imap_server import ImapServer
from tests.mail.transfer_fixtures import dovecot, make_destination, seed_bulk, start_body

COUNT = 600


@pytest.fixture(scope="module")
def imap() -> Iterator[ImapServer]:
    yield from dovecot()


def call(base: str, method: str, path: str, headers: dict[str, str], body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        base + path,
        data=data,
        method=method,
        headers={**headers, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as resp:
        return json.loads(resp.read())


def wait_for(base: str, headers: dict[str, str], transfer_id: str, until: Any, limit: float) -> Any:
    deadline = time.monotonic() + limit
    while True:
        body = call(base, "GET", f"/api/transfers/{transfer_id}", headers)
        if until(body):
            return body
        assert time.monotonic() < deadline, body
        time.sleep(0.02)


async def test_a_killed_gateway_resumes_without_duplicates(runtime, imap, gateway_process):
    seed_bulk(imap, "dave", COUNT, size=4000)
    account, headers = await signed_in(runtime)
    address_id = await make_destination(runtime, account)
    env = {
        "DATABASE_URL": str(runtime.settings.database_url),
        "DATA_DIR": str(runtime.settings.data_dir),
        "SECRET": TEST_SECRET,
        "RUN_WORKERS": "true",
        "TRANSFER_ALLOW_PRIVATE": "true",
        "TRANSFER_STALE_SECONDS": "2",
        "RATE_LIMIT_PER_SECOND": "100000",
    }
    first = gateway_process(env=env)
    created = call(
        first.base_url, "POST", "/api/transfers", headers, start_body(address_id, imap, "dave")
    )
    midway = wait_for(
        first.base_url,
        headers,
        created["id"],
        lambda b: b["progress"]["messages_done"] >= 40,
        30,
    )
    first.stop(signal.SIGKILL)
    assert midway["state"] == "running"
    killed_at = await runtime.db.fetch_one(
        "SELECT state, messages_done FROM mail.transfers WHERE id = %s", (created["id"],)
    )
    assert killed_at["state"] == "running" and killed_at["messages_done"] < COUNT

    second = gateway_process(env=env)
    done = wait_for(second.base_url, headers, created["id"], lambda b: b["state"] != "running", 60)
    assert done["state"] == "completed", done
    assert done["progress"]["messages_done"] == COUNT
    # Resumed from the last UID: nothing was fetched twice, so nothing was even a duplicate.
    assert done["progress"]["duplicates"] == 0
    rows = await runtime.db.fetch_one(
        "SELECT count(*) AS n, count(DISTINCT message_id) AS distinct_ids"
        " FROM mta.emails WHERE address_id = %s",
        (address_id,),
    )
    assert rows["n"] == rows["distinct_ids"] == COUNT
    assert (
        await runtime.db.fetch_val(
            "SELECT password_sealed FROM mail.transfers WHERE id = %s", (created["id"],)
        )
        is None
    )
