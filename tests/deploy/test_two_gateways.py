"""Two real gateways, one PostgreSQL, one S3 bucket: the multi-node claims, held.

What deploy/compose.yaml and the Kubernetes manifests rely on, shown on
real processes: the database is a separate PostgreSQL server the harness
started (neither gateway embeds it), migrated once by `python -m gateway
migrate` before the gateways start, as the compose file's `migrate` service
and the Kubernetes Job do. Each gateway has its own DATA_DIR and port, and
CMS media in one S3 bucket (moto's server, spoken to over HTTP as MinIO
would be). The gateways believe X-Forwarded-For from loopback, as they would
from the reverse proxy, so each test spends its own client address's budgets.

Whatever is published or stored through one gateway is seen by a client of
the other: panel sessions, rate-limit budgets, recurring jobs (each run
once), a CMS realtime event (WebSocket), a JMAP push (EventSource), a CMS
preview link and a media file.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import shutil
import smtplib
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import boto3
import httpx
import pytest
from websockets.asyncio.client import connect

from common.clock import Clock
from common.db import Database
from common.jobs import JobQueue
from common.runtime import Runtime
from common.settings import Settings, load_settings
from content.auth.service import LOGIN_LIMIT, LOGIN_WINDOW_SECONDS
from gateway import housekeeping
from gateway.services import build_daemons, build_services
from mail.auth.sessions import COOKIE_NAME
from mta.store import mailboxes
from tests.conftest import (
    ROOT,
    TEST_SECRET,
    GatewayProcess,
    _fresh_database,
    free_port,
    launch_gateway,
)
from tests.content.factories import make_delivery_key, make_type, make_user
from tests.mail.factories import PASSWORD, cookie, make_account
from tests.mta.jmap.conftest import Mailbox, make_mailbox
from tests.s3server import ACCESS_KEY, REGION, SECRET_KEY, s3_server

# One worker runs the whole module under xdist (make test: --dist loadfile), so one
# pair of gateways serves every test.
pytestmark = [pytest.mark.process, pytest.mark.xdist_group("two-gateways")]

MAIL = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail"]
WAIT = 15.0


@dataclass
class Pair:
    a: GatewayProcess
    b: GatewayProcess
    env: dict[str, str]  # what both were started with, beyond the harness's own
    database_url: str
    bucket: str
    mail_bucket: str
    s3: Any  # a boto3 client of the bucket's server


def migrate(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`python -m gateway migrate`, as the compose file's service and the Job run it."""
    return subprocess.run(
        [sys.executable, "-m", "gateway", "migrate"],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "SECRET": TEST_SECRET, "APP_ENV": "test", **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def pair(pg_admin_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    home = tmp_path_factory.mktemp("two-gateways")
    databases = _fresh_database(pg_admin_dsn, "template0")  # empty: nothing migrated
    database_url = next(databases)
    with s3_server() as s3:
        bucket = f"media-{secrets.token_hex(4)}"
        mail_bucket = f"mail-{secrets.token_hex(4)}"
        client = boto3.client(
            "s3",
            endpoint_url=s3.endpoint,
            region_name=REGION,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
        )
        client.create_bucket(Bucket=bucket)
        client.create_bucket(Bucket=mail_bucket)
        env = {
            "DATABASE_URL": database_url,
            "TRUSTED_PROXIES": "127.0.0.1/32",
            "SMTP_AUTH_CHECKS": "false",
            **s3.env(bucket),
            "MAIL_BLOB_STORE": "s3",
            "MAIL_S3_BUCKET": mail_bucket,
        }
        migrated = migrate(env)
        assert migrated.returncode == 0, migrated.stderr
        assert "migrations applied: common/" in migrated.stderr
        started: list[GatewayProcess] = []
        try:
            # Started together, as a rollout would: each takes the migration
            # lock, finds nothing to apply, and serves.
            # The first also runs the inbound SMTP daemon on a port the tests know.
            smtp = {"SMTP_PORT": str(free_port())}
            for index in (0, 1):
                own = {**env, **smtp} if index == 0 else env
                started.append(launch_gateway(home, index, env=own, wait=False))
            for gateway in started:
                gateway.wait_healthy()
            yield Pair(started[0], started[1], env, database_url, bucket, mail_bucket, client)
        finally:
            for gateway in started:
                gateway.stop()
            next(databases, None)


@dataclass
class Proxy:
    base_url: str  # Caddy, running deploy/Caddyfile
    jmap: subprocess.Popen[bytes]  # `python -m mta jmap`, behind it


def wait_for_port(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text(errors="replace")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        time.sleep(0.1)
    raise AssertionError(f"nothing listens on {port}:\n{log.read_text(errors='replace')}")


@pytest.fixture(scope="module")
def proxy(pair: Pair, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    """deploy/Caddyfile in front of the two gateways and a JMAP daemon of its own."""
    caddy = shutil.which("caddy")
    if caddy is None:
        pytest.skip("caddy is not installed (make proxy-checker installs it)")
    home = tmp_path_factory.mktemp("proxy")
    jmap_port, proxy_port = free_port(), free_port()
    # The daemon is told apart from the gateways by a limit its session shows.
    jmap_env = {**pair.a.env, "JMAP_HOST": "127.0.0.1", "JMAP_PORT": str(jmap_port)}
    jmap_env["JMAP_MAX_CALLS_IN_REQUEST"] = "7"
    started: list[subprocess.Popen[bytes]] = []
    try:
        with open(home / "jmap.log", "wb") as out:
            jmap = subprocess.Popen(
                [sys.executable, "-m", "mta", "jmap"],
                cwd=ROOT,
                env=jmap_env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        started.append(jmap)
        wait_for_port(jmap_port, jmap, home / "jmap.log")
        config = (ROOT / "deploy" / "Caddyfile").read_text()
        with urllib.request.urlopen(pair.a.base_url + "/healthz", timeout=5):
            pass
        try:
            urllib.request.urlopen(pair.a.base_url + "/readyz", timeout=5).close()
        except urllib.error.HTTPError:
            # Before the health endpoints land (issue 30's items 1-3), /healthz.
            config = config.replace("health_uri /readyz", "health_uri /healthz")
        # The admin endpoint off: concurrent runs on this machine must not collide on it.
        (home / "Caddyfile").write_text("{\n\tadmin off\n}\n" + config)
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(home),
            "XDG_DATA_HOME": str(home / "data"),
            "XDG_CONFIG_HOME": str(home / "config"),
            "SITE_ADDRESS": f"http://127.0.0.1:{proxy_port}",
            "GATEWAY_UPSTREAMS": f"127.0.0.1:{pair.a.port} 127.0.0.1:{pair.b.port}",
            "JMAP_UPSTREAM": f"127.0.0.1:{jmap_port}",
        }
        with open(home / "caddy.log", "wb") as out:
            server = subprocess.Popen(
                [caddy, "run", "--adapter", "caddyfile", "--config", str(home / "Caddyfile")],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        started.append(server)
        wait_for_port(proxy_port, server, home / "caddy.log")
        yield Proxy(base_url=f"http://127.0.0.1:{proxy_port}", jmap=jmap)
    finally:
        for proc in reversed(started):
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
async def runtime(pair: Pair) -> AsyncIterator[Runtime]:
    """Rows the tests need made directly in the shared database, on the real clock."""
    db = await Database.connect(pair.database_url, size=2)
    clock = Clock()
    try:
        yield Runtime(settings=Settings(), db=db, clock=clock, jobs=JobQueue(db, clock))
    finally:
        await db.close()


@pytest.fixture
async def clients(pair: Pair) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    """One HTTP client per gateway, both from one client address of this test's own."""
    address = f"198.51.100.{secrets.randbelow(250) + 1}"
    forwarded = {"X-Forwarded-For": address}
    async with (
        httpx.AsyncClient(base_url=pair.a.base_url, headers=forwarded, timeout=WAIT) as a,
        httpx.AsyncClient(base_url=pair.b.base_url, headers=forwarded, timeout=WAIT) as b,
    ):
        yield a, b


def test_neither_gateway_holds_the_database_and_migrating_again_finds_nothing(
    pair: Pair,
) -> None:
    for gateway in (pair.a, pair.b):
        assert not (Path(gateway.env["DATA_DIR"]) / "pgdata").exists()
    again = migrate(pair.env)
    assert again.returncode == 0, again.stderr
    assert "migrations applied: none pending" in again.stderr
    assert pair.a.env["DATA_DIR"] != pair.b.env["DATA_DIR"]


async def test_a_panel_session_made_on_one_is_valid_and_ended_on_the_other(
    clients: tuple[httpx.AsyncClient, httpx.AsyncClient], runtime: Runtime
) -> None:
    a, b = clients
    account = await make_account(runtime)
    signed_in = await a.post("/api/auth/login", json={"email": account.email, "password": PASSWORD})
    assert signed_in.status_code == 200, signed_in.text
    session = cookie(signed_in.cookies[COOKIE_NAME])
    me = await b.get("/api/auth/me", headers=session)
    assert me.status_code == 200 and me.json()["email"] == account.email
    assert (await b.post("/api/auth/logout", headers=session)).status_code == 204
    assert (await a.get("/api/auth/me", headers=session)).status_code == 401


async def test_both_spend_one_sign_in_budget(
    clients: tuple[httpx.AsyncClient, httpx.AsyncClient],
) -> None:
    a, b = clients
    # A fixed window: start well inside one, so all attempts count in the same.
    into_window = time.time() % LOGIN_WINDOW_SECONDS
    if into_window > LOGIN_WINDOW_SECONDS - 20:
        await asyncio.sleep(LOGIN_WINDOW_SECONDS - into_window + 1)
    wrong = {"email": "nobody@example.com", "password": "not the password"}
    statuses = []
    for n in range(LOGIN_LIMIT):
        statuses.append(
            (await (a if n % 2 else b).post("/cms/api/auth/login", json=wrong)).status_code
        )
    assert statuses == [401] * LOGIN_LIMIT
    for gateway in (a, b):
        refused = await gateway.post("/cms/api/auth/login", json=wrong)
        assert refused.status_code == 429
        assert int(refused.headers["retry-after"]) > 0


async def test_each_recurring_job_runs_once_for_both(pair: Pair, runtime: Runtime) -> None:
    """Both gateways run job workers and enqueue every recurring kind for each slot."""
    # The kinds a gateway with this environment registers, built here as it builds them.
    environ = MappingProxyType({**pair.a.env})
    here = replace(runtime, settings=load_settings(environ=environ))
    here = replace(here, jobs=JobQueue(runtime.db, runtime.clock))
    housekeeping.register(here)
    build_services(here)
    build_daemons(here)
    expected = here.jobs.recurring
    assert "common.sweep" in expected and len(expected) > 5
    deadline = time.monotonic() + 60
    while True:
        rows = await runtime.db.fetch_all(
            "SELECT key, kind, state, attempts FROM common.jobs WHERE key LIKE 'every:%%'"
        )
        ran = {r["kind"] for r in rows if r["state"] == "done"}
        if ran >= expected and all(r["state"] == "done" for r in rows):
            break
        assert time.monotonic() < deadline, f"recurring jobs not finished: {rows}"
        await asyncio.sleep(0.5)
    # Each kind's slot is one job (its key), claimed once: a second claim by
    # the other gateway would have counted a second attempt.
    assert [r["key"] for r in rows if r["attempts"] != 1] == []


async def realtime_event_across(
    publisher: httpx.AsyncClient, listener: httpx.AsyncClient, runtime: Runtime
) -> None:
    """An entry made through ``publisher`` reaches a realtime socket opened through ``listener``."""
    kind = f"note{secrets.token_hex(2)}"
    await make_type(runtime.db, runtime.clock, kind, [])
    editor = await make_user(runtime.db, runtime.clock, "editor")
    ticket = await listener.post("/cms/api/realtime/ticket", headers=editor.headers)
    assert ticket.status_code == 201, ticket.text
    base = str(listener.base_url).rstrip("/").replace("http://", "ws://")
    async with connect(f"{base}/cms/realtime?ticket={ticket.json()['ticket']}") as ws:
        assert json.loads(await asyncio.wait_for(ws.recv(), WAIT))["type"] == "ready"
        await ws.send(json.dumps({"action": "subscribe", "topic": "site"}))
        assert json.loads(await asyncio.wait_for(ws.recv(), WAIT))["type"] == "subscribed"
        made = await publisher.post(
            "/cms/api/entries", json={"type": kind, "title": "Across"}, headers=editor.headers
        )
        assert made.status_code == 201, made.text
        event = json.loads(await asyncio.wait_for(ws.recv(), WAIT))
    assert event == {
        "topic": "site",
        "event": "entry.created",
        "data": {"id": made.json()["id"], "slug": made.json()["slug"], "type": kind},
    }


async def jmap_box(runtime: Runtime, name: str) -> Mailbox:
    """A JMAP account with its default mailboxes, on a domain of its own."""
    box = await make_mailbox(runtime.db, f"{name}@{secrets.token_hex(3)}.example.test")
    async with runtime.db.transaction() as conn:
        await mailboxes.ensure_defaults(conn, box.address_id, runtime.clock.now())
    return box


async def first_state_event(stream: httpx.Response) -> dict[str, Any]:
    event = ""
    async for line in stream.aiter_lines():
        if line.startswith("event:"):
            event = line.partition(":")[2].strip()
        elif line.startswith("data:") and event == "state":
            return dict(json.loads(line.partition(":")[2]))
    raise AssertionError("the stream ended")


async def push_across(
    publisher: httpx.AsyncClient, listener: httpx.AsyncClient, box: Mailbox
) -> None:
    """A Mailbox/set through ``publisher`` is pushed to an EventSource opened through ``listener``."""
    auth = {"Authorization": box.basic}

    async def create_mailbox(name: str) -> str:
        call = ["Mailbox/set", {"accountId": box.address_id, "create": {"m": {"name": name}}}, "0"]
        answer = await publisher.post(
            "/jmap", headers=auth, json={"using": MAIL, "methodCalls": [call]}
        )
        assert answer.status_code == 200, answer.text
        return str(answer.json()["methodResponses"][0][1]["newState"])

    query = "/jmap/eventsource?types=Mailbox&closeafter=state&ping=0"
    async with listener.stream("GET", query, headers=auth) as stream:
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        waiting = asyncio.ensure_future(first_state_event(stream))
        # The listening process's LISTEN may take a moment to start after the
        # stream opens: publish again until one change has been pushed.
        for attempt in range(10):
            state = await create_mailbox(f"Folder {secrets.token_hex(2)} {attempt}")
            done, _ = await asyncio.wait({waiting}, timeout=2)
            if done:
                break
        pushed = await asyncio.wait_for(waiting, WAIT)
    assert pushed["@type"] == "StateChange"
    assert pushed["changed"][box.address_id]["Mailbox"] == state


async def test_a_cms_event_published_through_one_reaches_a_socket_on_the_other(
    clients: tuple[httpx.AsyncClient, httpx.AsyncClient], runtime: Runtime
) -> None:
    a, b = clients
    await realtime_event_across(a, b, runtime)


async def test_a_jmap_change_through_one_is_pushed_to_an_event_source_on_the_other(
    clients: tuple[httpx.AsyncClient, httpx.AsyncClient], runtime: Runtime
) -> None:
    a, b = clients
    await push_across(a, b, await jmap_box(runtime, "push"))


async def test_a_preview_made_on_one_is_read_on_the_other(
    clients: tuple[httpx.AsyncClient, httpx.AsyncClient], runtime: Runtime
) -> None:
    a, b = clients
    kind = f"page{secrets.token_hex(2)}"
    await make_type(runtime.db, runtime.clock, kind, [{"key": "body", "type": "markdown"}])
    editor = await make_user(runtime.db, runtime.clock, "editor")
    entry = await a.post(
        "/cms/api/entries",
        json={"type": kind, "title": "Draft", "data": {"body": "saved"}},
        headers=editor.headers,
    )
    assert entry.status_code == 201, entry.text
    link = await a.post(
        f"/cms/api/entries/{entry.json()['id']}/preview",
        json={"title": "Unsaved", "data": {"body": "typed on one"}},
        headers=editor.headers,
    )
    assert link.status_code == 201, link.text
    key = await make_delivery_key(runtime.db, runtime.clock, ["*"])
    shown = await b.get(f"/cms/preview/{link.json()['token']}", headers={"X-Api-Key": key})
    assert shown.status_code == 200, shown.text
    assert (shown.json()["title"], shown.json()["data"]["body"]) == ("Unsaved", "typed on one")


async def test_media_uploaded_through_one_is_served_by_the_other_from_the_bucket(
    pair: Pair, clients: tuple[httpx.AsyncClient, httpx.AsyncClient], runtime: Runtime
) -> None:
    a, b = clients
    editor = await make_user(runtime.db, runtime.clock, "editor")
    data = secrets.token_bytes(200_000)
    made = await a.post(
        "/cms/api/media",
        files={"file": ("noise.bin", data, "application/octet-stream")},
        headers=editor.headers,
    )
    assert made.status_code == 201, made.text
    sha = made.json()["sha256"]
    served = await b.get(f"/cms/media/files/{sha}")
    assert served.status_code == 200 and served.content == data
    ranged = await b.get(f"/cms/media/files/{sha}", headers={"Range": "bytes=10-19"})
    assert ranged.status_code == 206 and ranged.content == data[10:20]
    keys = [o["Key"] for o in pair.s3.list_objects_v2(Bucket=pair.bucket).get("Contents", [])]
    assert any(k.endswith(sha) for k in keys)
    # In the bucket only: neither gateway's DATA_DIR holds the bytes.
    for gateway in (pair.a, pair.b):
        assert not await asyncio.to_thread(
            lambda root: list(Path(root).rglob(sha)), gateway.env["DATA_DIR"]
        )


def bucket_keys(pair: Pair, bucket: str) -> list[str]:
    return [o["Key"] for o in pair.s3.list_objects_v2(Bucket=bucket).get("Contents", [])]


def on_disk(pair: Pair, blob_id: str) -> list[Path]:
    return [path for g in (pair.a, pair.b) for path in Path(g.env["DATA_DIR"]).rglob(blob_id)]


async def test_large_mail_and_jmap_uploads_through_one_are_read_on_the_other(
    pair: Pair, clients: tuple[httpx.AsyncClient, httpx.AsyncClient], runtime: Runtime
) -> None:
    """Past 256 KiB a message leaves PostgreSQL for the mail bucket, which both read."""
    a, b = clients
    box = await jmap_box(runtime, "big")
    auth = {"Authorization": box.basic}
    body = ("a long line of a long report\r\n" * 12000).encode()
    message = (
        f"From: carol@remote.test\r\nTo: {box.email}\r\nSubject: long report\r\n"
        "Message-ID: <long-report@remote.test>\r\n\r\n"
    ).encode() + body

    def send() -> None:
        with smtplib.SMTP("127.0.0.1", int(pair.a.env["SMTP_PORT"]), timeout=30) as smtp:
            assert smtp.sendmail("carol@remote.test", [box.email], message) == {}

    await asyncio.to_thread(send)
    answer = await b.post(
        "/jmap",
        headers=auth,
        json={
            "using": MAIL,
            "methodCalls": [
                ["Email/query", {"accountId": box.address_id}, "q"],
                [
                    "Email/get",
                    {
                        "accountId": box.address_id,
                        "#ids": {"resultOf": "q", "name": "Email/query", "path": "/ids"},
                        "properties": ["subject", "blobId", "size"],
                    },
                    "g",
                ],
            ],
        },
    )
    assert answer.status_code == 200, answer.text
    [email] = answer.json()["methodResponses"][1][1]["list"]
    assert email["subject"] == "long report" and email["size"] > 256 * 1024
    raw = await b.get(f"/jmap/download/{box.address_id}/{email['blobId']}/m.eml", headers=auth)
    assert raw.status_code == 200 and raw.content.endswith(body)
    assert any(key.endswith(email["blobId"]) for key in bucket_keys(pair, pair.mail_bucket))

    upload = secrets.token_bytes(300_000)
    sent = await a.post(
        f"/jmap/upload/{box.address_id}",
        content=upload,
        headers={**auth, "Content-Type": "application/octet-stream"},
    )
    assert sent.status_code == 201, sent.text
    blob_id = sent.json()["blobId"]
    fetched = await b.get(f"/jmap/download/{box.address_id}/{blob_id}/x.bin", headers=auth)
    assert fetched.status_code == 200 and fetched.content == upload
    # Neither gateway's DATA_DIR holds them; the CMS's bucket does not either.
    assert await asyncio.to_thread(on_disk, pair, email["blobId"]) == []
    assert await asyncio.to_thread(on_disk, pair, blob_id) == []
    assert not any(blob_id in key for key in bucket_keys(pair, pair.bucket))


async def test_through_the_proxy_streams_pass_and_jmap_goes_to_its_daemon(
    proxy: Proxy, clients: tuple[httpx.AsyncClient, httpx.AsyncClient], runtime: Runtime
) -> None:
    """deploy/Caddyfile, run by Caddy: what the compose file's users go through."""
    a, _ = clients
    box = await jmap_box(runtime, "proxied")
    async with httpx.AsyncClient(base_url=proxy.base_url, timeout=WAIT) as edge:
        # The session comes from `python -m mta jmap`, not from a gateway.
        session = await edge.get("/.well-known/jmap", headers={"Authorization": box.basic})
        assert session.status_code == 200, session.text
        core = session.json()["capabilities"]["urn:ietf:params:jmap:core"]
        assert core["maxCallsInRequest"] == 7
        direct = await a.get("/.well-known/jmap", headers={"Authorization": box.basic})
        assert direct.json()["capabilities"]["urn:ietf:params:jmap:core"]["maxCallsInRequest"] == 16
        # Everything else reaches the gateways, in their own shapes.
        assert (await edge.get("/healthz")).status_code == 200
        assert (await edge.get("/cms/nope")).json()["code"] == "NOT_FOUND"
        # A WebSocket upgrade and an event stream pass through, unbuffered.
        await realtime_event_across(a, edge, runtime)
        await push_across(a, edge, box)
