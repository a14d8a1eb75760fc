"""``python -m mta jmap`` and ``python -m mta smtp`` as two processes: push crosses between them."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from common.runtime import Runtime
from tests.conftest import ROOT, free_port
from tests.mta.dnsserver import LoopbackDNS
from tests.mta.jmap.conftest import MAIL, Mailbox, run
from tests.mta.test_crash_safety import daemon_env, send_one, start_daemon


def start_jmap(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mta", "jmap"], cwd=ROOT, env=env, stdout=out, stderr=out
        )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jmap exited: {log.read_text()}")
        if "listening on port" in log.read_text():
            return proc
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"jmap did not listen: {log.read_text()}")


@pytest.fixture
def daemons(runtime: Runtime, dns_server: LoopbackDNS, tmp_path: Path) -> Iterator[dict[str, Any]]:
    smtp, jmap = free_port(), free_port()
    env = daemon_env(runtime, dns_server, smtp, JMAP_HOST="127.0.0.1", JMAP_PORT=str(jmap))
    procs = [start_daemon(env, tmp_path / "smtp.log"), start_jmap(env, tmp_path / "jmap.log")]
    try:
        yield {"smtp": smtp, "jmap": f"http://127.0.0.1:{jmap}"}
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(10)


def first_state_event(url: str, auth: str, open_: threading.Event) -> dict[str, Any]:
    with requests.get(url, headers={"Authorization": auth}, stream=True, timeout=20) as r:
        # Headers arrive after the server read the states it compares against.
        open_.set()
        for line in r.iter_lines(decode_unicode=True):
            if line.startswith("data: "):
                return json.loads(line[6:])  # type: ignore[no-any-return]
    raise AssertionError("the stream ended without an event")


async def test_mail_stored_by_the_smtp_process_is_pushed_by_the_jmap_process(
    daemons: dict[str, Any], alice: Mailbox
) -> None:
    base = daemons["jmap"]
    session = await run(
        requests.get, f"{base}/.well-known/jmap", headers={"Authorization": alice.basic}, timeout=10
    )
    assert session.status_code == 200
    assert session.json()["apiUrl"] == f"{base}/jmap"
    before = (
        await run(
            requests.post,
            f"{base}/jmap",
            json={
                "using": MAIL,
                "methodCalls": [["Mailbox/get", {"accountId": alice.address_id, "ids": []}, "0"]],
            },
            headers={"Authorization": alice.basic},
            timeout=10,
        )
    ).json()["methodResponses"][0][1]["state"]
    url = f"{base}/jmap/eventsource?types=Mailbox&closeafter=state&ping=0"
    opened = threading.Event()
    watching = asyncio.ensure_future(run(first_state_event, url, alice.basic, opened))
    assert await run(opened.wait, 20)
    assert await run(send_one, daemons["smtp"], "pushed", alice.email) == "250"
    event = await asyncio.wait_for(watching, 20)
    pushed = event["changed"][alice.address_id]["Mailbox"]
    assert pushed != before
    changes = (
        await run(
            requests.post,
            f"{base}/jmap",
            json={
                "using": MAIL,
                "methodCalls": [
                    ["Mailbox/changes", {"accountId": alice.address_id, "sinceState": before}, "0"]
                ],
            },
            headers={"Authorization": alice.basic},
            timeout=10,
        )
    ).json()["methodResponses"][0][1]
    assert changes["newState"] == pushed and len(changes["updated"]) == 1
