"""Prometheus metrics: every metric the product exports, defined in one place.

Names are in base units (seconds, bytes), counters end in ``_total``, and no
label ever holds a user, an email address, a domain or an IP: labels are
service names, route templates, methods, statuses and fixed outcome words,
so each metric has a bounded number of series.

Several processes (``--workers N``): the supervisor gives its children one
``PROMETHEUS_MULTIPROC_DIR``, which prometheus-client reads when it is
imported; each process then writes its values to its own memory-mapped files
there, and whichever process answers ``/metrics`` merges them all
(prometheus-client's multiprocess mode; docs/architecture.md, "Metrics").
Gauges of live things (pool connections in use, open sockets) are summed
over processes (``livesum``); children are never restarted one by one (one
dying stops them all), and the directory goes when the supervisor stops.

What lives in the database (queue depths and ages, dead jobs) is read at
scrape time by :class:`DatabaseGauges`, one cheap indexed query per second
at most, whichever process is asked.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client import multiprocess as _multiprocess
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE = CONTENT_TYPE_LATEST

PROCESSES = Gauge(
    "gateway_processes",
    "Gateway processes serving (1 each), summed over live processes.",
    multiprocess_mode="livesum",
)

# --- HTTP ---------------------------------------------------------------------

HTTP_REQUESTS = Counter(
    "http_requests",
    "HTTP requests answered, by service, route template, method and status.",
    ["service", "route", "method", "status"],
)
HTTP_DURATION = Histogram(
    "http_request_duration_seconds",
    "Time from the request's arrival at the gateway to its handler's answer.",
    ["service", "route", "method"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

# The labelled children per (service, route, method, status): ``labels()``
# validates and locks on every call, half the cost of counting a request.
# The keys are bounded as the labels are.
_http_children: dict[tuple[str, str, str, int], tuple[Any, Any]] = {}


def http_request(service: str, route: str, method: str, status: int, seconds: float) -> None:
    key = (service, route, method, status)
    children = _http_children.get(key)
    if children is None:
        children = _http_children[key] = (
            HTTP_REQUESTS.labels(service, route, method, str(status)),
            HTTP_DURATION.labels(service, route, method),
        )
    children[0].inc()
    children[1].observe(seconds)


# --- SMTP ---------------------------------------------------------------------

SMTP_SESSIONS = Counter(
    "smtp_sessions", "SMTP connections accepted, by daemon (inbound, submission).", ["daemon"]
)
SMTP_CONNECTIONS_REFUSED = Counter(
    "smtp_connections_refused",
    "SMTP connections closed with 421 before any command (connection caps).",
    ["daemon"],
)
SMTP_ACCEPTED = Counter(
    "smtp_messages_accepted", "Messages answered 250 after DATA, by daemon.", ["daemon"]
)
SMTP_REFUSED = Counter(
    "smtp_messages_refused",
    "MAIL, RCPT or DATA commands refused (4xx or 5xx), by daemon, stage and reason.",
    ["daemon", "stage", "reason"],
)
OUTBOUND_ATTEMPTS = Counter(
    "mail_outbound_delivery_attempts",
    "Outbound delivery attempts per recipient, by outcome"
    " (delivered, deferred, bounced, failed, suppressed).",
    ["outcome"],
)

# --- JMAP, jobs, database -----------------------------------------------------

JMAP_CALLS = Counter(
    "jmap_method_calls",
    "JMAP method calls run, by method name (unknown names are counted as 'unknown').",
    ["method"],
)
JOB_RUNS = Counter(
    "jobs_runs", "Jobs run, by kind and outcome (done, retry, dead).", ["kind", "outcome"]
)
JOB_RETRIES = Counter("jobs_retries", "Job runs that failed and were scheduled again.", ["kind"])
JOB_DEAD = Counter("jobs_dead", "Jobs that failed their last try and are now dead.", ["kind"])
DB_POOL_IN_USE = Gauge(
    "db_pool_connections_in_use",
    "Pooled database connections checked out, summed over live processes.",
    multiprocess_mode="livesum",
)
DB_POOL_SIZE = Gauge(
    "db_pool_connections",
    "Pooled database connections open, summed over live processes.",
    multiprocess_mode="livesum",
)
DB_POOL_WAIT = Histogram(
    "db_pool_wait_seconds",
    "Time a checkout waited because no idle connection was free"
    " (checkouts served at once are not observed).",
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0),
)

# --- live connections, webhooks -----------------------------------------------

REALTIME_CONNECTIONS = Gauge(
    "realtime_connections",
    "Open CMS realtime WebSockets, summed over live processes.",
    multiprocess_mode="livesum",
)
PUSH_CONNECTIONS = Gauge(
    "jmap_push_connections",
    "Open JMAP push connections, by transport (eventsource, websocket).",
    ["transport"],
    multiprocess_mode="livesum",
)
WEBHOOK_DELIVERIES = Counter(
    "webhook_deliveries",
    "Webhook delivery attempts, by service (mail, content) and outcome"
    " (delivered: 2xx; rejected: another status; unreachable: no answer).",
    ["service", "outcome"],
)


def webhook_attempt(service: str, status: int | None, ok: bool) -> None:
    outcome = "delivered" if ok else ("rejected" if status else "unreachable")
    WEBHOOK_DELIVERIES.labels(service, outcome).inc()


def multiprocess_dir() -> str | None:
    """The directory every process of this gateway writes its metrics to, if any."""
    path = os.environ.get(MULTIPROC_ENV)
    return path if path and os.path.isdir(path) else None


# --- what lives in the database -------------------------------------------------


@dataclass(frozen=True)
class QueueStats:
    jobs_pending: int
    jobs_oldest_due: datetime | None
    jobs_dead: int
    outbound_pending: int = 0
    outbound_oldest_due: datetime | None = None


# The job queue's part of the scrape: each reads only rows a partial index
# covers (jobs_pending_due, jobs_dead). The outbound queue's part is its
# owner's (mta/store/outbound.py QUEUE_GAUGE_COLUMNS); gateway/observe.py
# joins them into one statement with queue_sql().
JOBS_QUEUE_COLUMNS = """
       (SELECT count(*) FROM common.jobs WHERE state = 'pending') AS jobs_pending,
       (SELECT min(run_at) FROM common.jobs
         WHERE state = 'pending' AND run_at <= %(now)s) AS jobs_oldest_due,
       (SELECT count(*) FROM common.jobs WHERE state = 'dead') AS jobs_dead"""


def queue_sql(*columns: str) -> str:
    """One statement reading every part of the scrape-time gauges (``%(now)s`` bound)."""
    return "SELECT " + ",".join(columns)


class DatabaseGauges(Collector):
    """Queue depths and ages, read at scrape time and kept for ``ttl`` seconds."""

    def __init__(self, sql: str = queue_sql(JOBS_QUEUE_COLUMNS), ttl: float = 1.0) -> None:
        self.sql = sql
        self.ttl = ttl
        self._stats: QueueStats | None = None
        self._now: datetime | None = None
        self._read_at = float("-inf")

    async def refresh(self, db: Any, now: datetime) -> None:
        if time.monotonic() - self._read_at < self.ttl and self._stats is not None:
            return
        row = await db.fetch_one(self.sql, {"now": now})
        assert row is not None
        self._stats = QueueStats(**row)
        self._now = now
        self._read_at = time.monotonic()

    def collect(self) -> Iterator[GaugeMetricFamily]:
        stats, now = self._stats, self._now
        if stats is None or now is None:
            return
        yield _gauge("jobs_queue_depth", "Jobs waiting to run (pending).", stats.jobs_pending)
        yield _gauge(
            "jobs_oldest_age_seconds",
            "How long the oldest due pending job has been waiting (0 when none).",
            _age(now, stats.jobs_oldest_due),
        )
        yield _gauge(
            "jobs_dead_count", "Jobs that are dead, kept for an operator.", stats.jobs_dead
        )
        yield _gauge(
            "mail_outbound_queue_depth",
            "Outbound recipients still to be tried (queued, deferred or scheduled).",
            stats.outbound_pending,
        )
        yield _gauge(
            "mail_outbound_oldest_age_seconds",
            "How long the oldest due outbound message has been in the queue (0 when none).",
            _age(now, stats.outbound_oldest_due),
        )


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, value=value)


def _age(now: datetime, since: datetime | None) -> float:
    return 0.0 if since is None else max(0.0, (now - since).total_seconds())


def exposition(extra: Iterable[Collector] = ()) -> bytes:
    """The text format of every process's metrics plus ``extra`` collectors."""
    path = multiprocess_dir()
    if path is not None:
        registry = CollectorRegistry()
        _multiprocess.MultiProcessCollector(registry, path=path)
        body = generate_latest(registry)
    else:
        body = generate_latest(REGISTRY)
    rest = CollectorRegistry(auto_describe=False)
    for collector in extra:
        rest.register(collector)
    return body + generate_latest(rest)
