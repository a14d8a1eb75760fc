"""Metrics, request ids, liveness, readiness and the SIGTERM drain, on the real process."""

from __future__ import annotations

import asyncio
import json
import signal
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from common.db import execute, fetch_all
from common.runtime import Runtime
from gateway import observe
from tests.conftest import GatewayProcess, free_port
from tests.mta.conftest import send
from tests.mta.dnsserver import LoopbackDNS
from tests.mta.jmap.conftest import MAIL, make_mailbox

METRICS_TOKEN = "metrics-token-" + "m" * 30
Sample = tuple[str, dict[str, str], float]


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes, Any]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read(), response.headers
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), exc.headers


def post_json(url: str, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", **headers},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, json.loads(response.read())


def scrape(gateway: GatewayProcess, headers: dict[str, str] | None = None) -> list[Sample]:
    status, body, headers_ = get(gateway.base_url + "/metrics", headers)
    assert status == 200, body
    assert headers_["Content-Type"].startswith("text/plain; version=")
    return [
        (sample.name, dict(sample.labels), sample.value)
        for family in text_string_to_metric_families(body.decode())
        for sample in family.samples
    ]


def value(samples: list[Sample], name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    found = [
        v for n, ls, v in samples if n == name and all(ls.get(k) == w for k, w in labels.items())
    ]
    assert found, f"no {name} {labels} in the scrape"
    return sum(found)


async def test_metrics_after_http_smtp_and_jmap_traffic(
    runtime: Runtime, gateway_process: Callable[..., GatewayProcess], dns_server: LoopbackDNS
) -> None:
    alice = await make_mailbox(runtime.db, "alice@example.test")
    smtp_port = free_port()
    gateway = await asyncio.to_thread(
        gateway_process,
        env={
            "DATABASE_URL": str(runtime.settings.database_url),
            "SMTP_PORT": str(smtp_port),
            "DNS_RESOLVERS": dns_server.address,
        },
    )
    base = gateway.base_url
    # HTTP: a service route with a parameter, a CMS document, a path nothing serves.
    assert (await asyncio.to_thread(get, base + "/api/domains/secret-alice-id"))[0] == 401
    assert (await asyncio.to_thread(get, base + "/cms/api/openapi.json"))[0] == 200
    assert (await asyncio.to_thread(get, base + "/no/such/alice@example.test"))[0] == 404
    # SMTP through the real daemon: one message accepted, one recipient refused.
    delivered = await send(
        smtp_port,
        "bob@sender.test",
        ["alice@example.test", "nobody@example.test"],
        b"Subject: hi\r\n\r\nx\r\n",
    )
    assert delivered["data"][0] == 250
    assert delivered["refused"]["nobody@example.test"][0] == 550
    # JMAP: one request with two method calls.
    status, _ = await asyncio.to_thread(
        post_json,
        base + "/jmap",
        {
            "using": MAIL,
            "methodCalls": [
                ["Mailbox/get", {"accountId": alice.address_id, "ids": None}, "0"],
                ["Email/query", {"accountId": alice.address_id}, "1"],
            ],
        },
        {"Authorization": alice.basic},
    )
    assert status == 200

    samples = await asyncio.to_thread(scrape, gateway)
    # HTTP by service, route template and status; never the raw path.
    assert value(
        samples, "http_requests_total", service="mail", route="/api/domains/{domain_id}",
        method="GET", status="401",
    ) == 1  # fmt: skip
    assert value(
        samples, "http_requests_total", service="content", route="/cms/api/openapi.json",
        status="200",
    ) == 1  # fmt: skip
    assert value(samples, "http_requests_total", status="404") == 1
    assert value(samples, "http_request_duration_seconds_count", route="/jmap") >= 1
    # SMTP.
    assert value(samples, "smtp_sessions_total", daemon="inbound") >= 1
    assert value(samples, "smtp_messages_accepted_total", daemon="inbound") == 1
    assert value(
        samples, "smtp_messages_refused_total", daemon="inbound", stage="rcpt",
        reason="unknown_user",
    ) == 1  # fmt: skip
    # JMAP by method.
    assert value(samples, "jmap_method_calls_total", method="Mailbox/get") == 1
    assert value(samples, "jmap_method_calls_total", method="Email/query") == 1
    # Read from the database at scrape time.
    for name in (
        "jobs_queue_depth",
        "jobs_oldest_age_seconds",
        "jobs_dead_count",
        "mail_outbound_queue_depth",
        "mail_outbound_oldest_age_seconds",
    ):
        assert value(samples, name) >= 0
    assert value(samples, "db_pool_connections") >= 1
    assert value(samples, "gateway_processes") == 1
    # No label holds a user, an address, a domain or a raw path.
    for name, labels, _ in samples:
        for label in labels.values():
            assert "alice" not in label and "example.test" not in label, (name, labels)
            assert "@" not in label and "secret" not in label, (name, labels)


async def test_metrics_are_refused_outside_the_allowed_networks_without_the_token(
    runtime: Runtime, gateway_process: Callable[..., GatewayProcess]
) -> None:
    gateway = await asyncio.to_thread(
        gateway_process,
        env={
            "DATABASE_URL": str(runtime.settings.database_url),
            # Loopback (where the test connects from) is not in it.
            "METRICS_ALLOW": "192.0.2.0/24",
            "METRICS_TOKEN": METRICS_TOKEN,
        },
    )
    url = gateway.base_url + "/metrics"
    status, body, _ = await asyncio.to_thread(get, url)
    assert status == 403
    assert b"http_requests_total" not in body
    status, body, headers = await asyncio.to_thread(
        get, url, {"Authorization": "Bearer not-the-token-at-all"}
    )
    assert status == 401
    assert headers["WWW-Authenticate"].startswith("Bearer")
    assert b"http_requests_total" not in body
    samples = await asyncio.to_thread(scrape, gateway, {"Authorization": f"Bearer {METRICS_TOKEN}"})
    assert value(samples, "http_requests_total", route="/metrics", status="403") == 1
    assert value(samples, "http_requests_total", route="/metrics", status="401") == 1


async def test_metrics_default_to_loopback_only(
    runtime: Runtime, gateway_process: Callable[..., GatewayProcess]
) -> None:
    # A proxy on this machine forwarding a stranger: TRUSTED_PROXIES makes the
    # client that stranger, and the default allows loopback only.
    gateway = await asyncio.to_thread(
        gateway_process,
        env={"DATABASE_URL": str(runtime.settings.database_url), "TRUSTED_PROXIES": "127.0.0.1"},
    )
    url = gateway.base_url + "/metrics"
    assert (await asyncio.to_thread(get, url))[0] == 200
    forwarded = {"X-Forwarded-For": "203.0.113.9"}
    assert (await asyncio.to_thread(get, url, forwarded))[0] == 403


def test_metrics_count_every_worker_process(
    database_url: str, gateway_process: Callable[..., GatewayProcess]
) -> None:
    gateway = gateway_process("--workers", "2", env={"DATABASE_URL": database_url})
    deadline = time.monotonic() + 30
    while value(scrape(gateway), "gateway_processes") != 2:
        assert time.monotonic() < deadline, "the second worker never reported"
        time.sleep(0.2)
    requests = 40
    for _ in range(requests):
        # A new connection each: the kernel spreads them over both processes.
        assert get(gateway.base_url + "/livez")[0] == 200
    # Whichever process answers a scrape, it reports both processes' requests.
    for _ in range(6):
        samples = scrape(gateway)
        assert value(samples, "http_requests_total", route="/livez", status="200") == requests
        assert value(samples, "gateway_processes") == 2
    # Each process sampled its own pool; the live sum covers both.
    assert value(samples, "db_pool_connections") >= 2


async def test_request_ids_are_kept_when_sane_and_made_otherwise(
    runtime: Runtime, gateway_process: Callable[..., GatewayProcess]
) -> None:
    gateway = await asyncio.to_thread(
        gateway_process, env={"DATABASE_URL": str(runtime.settings.database_url)}
    )
    url = gateway.base_url + "/api/auth/me"
    status, _, headers = await asyncio.to_thread(get, url, {"X-Request-Id": "abc-123.x"})
    assert status == 401  # error answers carry it too
    assert headers["X-Request-Id"] == "abc-123.x"
    _, _, headers = await asyncio.to_thread(get, url, {"X-Request-Id": "bad id\twith spaces"})
    assert headers["X-Request-Id"] != "bad id\twith spaces"
    assert len(headers["X-Request-Id"]) == 32
    _, _, first = await asyncio.to_thread(get, url)
    _, _, second = await asyncio.to_thread(get, url)
    assert first["X-Request-Id"] != second["X-Request-Id"]


# --- health ---------------------------------------------------------------------


async def test_readiness_reports_each_check(
    runtime: Runtime, gateway_process: Callable[..., GatewayProcess]
) -> None:
    gateway = await asyncio.to_thread(
        gateway_process, env={"DATABASE_URL": str(runtime.settings.database_url)}
    )
    status, body, _ = await asyncio.to_thread(get, gateway.base_url + "/readyz")
    assert status == 200, body
    ready = json.loads(body)
    assert ready["status"] == "ready"
    assert ready["checks"] == {
        "draining": "no",
        "database": "ok",
        "migrations": "ok",
        "mta": "listening",
    }
    assert (await asyncio.to_thread(get, gateway.base_url + "/livez"))[0] == 200
    # /healthz is kept as it was.
    status, body, _ = await asyncio.to_thread(get, gateway.base_url + "/healthz")
    assert (status, json.loads(body)) == (200, {"status": "ok"})


async def test_readiness_fails_while_a_migration_is_missing(gateway_client: Any, db: Any) -> None:
    assert (await gateway_client.get("/readyz")).status == 200
    await db.execute("DELETE FROM mta.schema_migrations WHERE name = '0090_outbound_trace.sql'")
    resp = await gateway_client.get("/readyz")
    assert resp.status == 503
    body = await resp.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["migrations"] == "1 pending"
    # Alive all the same: a restart would not help, a migration would.
    assert (await gateway_client.get("/livez")).status == 200


def test_sigterm_turns_readiness_off_before_the_listeners_close(
    database_url: str, gateway_process: Callable[..., GatewayProcess]
) -> None:
    gateway = gateway_process(env={"DATABASE_URL": database_url, "SHUTDOWN_DRAIN": "3"})
    assert get(gateway.base_url + "/readyz")[0] == 200
    gateway.proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 10
    while True:
        status, body, _ = get(gateway.base_url + "/readyz")
        if status == 503:
            break
        assert time.monotonic() < deadline, "readiness never turned off"
        time.sleep(0.05)
    assert json.loads(body)["checks"]["draining"] == "yes"
    # Still serving during the drain: liveness and ordinary requests answer.
    assert get(gateway.base_url + "/livez")[0] == 200
    assert get(gateway.base_url + "/api/auth/signups")[0] == 200
    assert gateway.proc.wait(30) == 0
    with pytest.raises(OSError):
        get(gateway.base_url + "/livez")
    log = gateway.log()
    assert log.index("draining: not ready") < log.index("server, workers and daemons stopped")


async def test_the_scrape_time_queue_query_reads_only_indexes(db: Any) -> None:
    async with db.connection() as conn:
        # Tables of a test are tiny; forbid the sequential scan to see whether
        # an index can serve each part (a part without one would still scan).
        await execute(conn, "SET enable_seqscan = off")
        rows = await fetch_all(conn, "EXPLAIN " + observe.QUEUE_SQL, {"now": datetime.now(UTC)})
    plan = "\n".join(row["QUERY PLAN"] for row in rows)
    assert "Seq Scan" not in plan, plan
    for index in ("jobs_pending_due", "jobs_dead", "outbound_recipients_due"):
        assert index in plan, plan
