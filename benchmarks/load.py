"""The whole product under load: every service at once, for minutes, errors and memory.

    .venv/bin/python benchmarks/load.py [--minutes 10] [--scale 10] [--workers 2]
        [--accounts 20] [--write-docs]

Runs the real ``python -m gateway`` (``--workers`` serving processes under its
supervisor; each runs the job workers, the SMTP daemon, the outbound queue
worker and JMAP; submission is off, nothing here drives it) on an embedded
PostgreSQL in a temporary directory, and
drives it at ``--scale`` times the load assumed for a small host. That small
host, per second:

  panel          0.5 page views (the screen's HTML and the API calls its
                 module makes; versioned assets are cached by the browser)
  CMS delivery   5 reads (single entries over 200 hot slugs, list pages)
  realtime       5 WebSocket subscribers held open on content:post, and
                 0.1 publish or unpublish a second (PATCH by an editor),
                 each event fanned out to every subscriber
  SMTP inbound   0.5 messages (10 KB, a new session each, SPF/DKIM/DMARC)
  sending API    0.2 sends (POST /api/emails with an API key), delivered by
                 the outbound queue to a local SMTP sink (OUTBOUND_RELAY)
  JMAP           5 clients each syncing every 10 s (Email/changes then
                 Email/get of what was created)

so at the default scale: 5 page views/s, 50 delivery reads/s, 50 sockets
and 1 publication/s (50 frames/s), 5 inbound messages/s, 2 sends/s and 5
JMAP syncs/s. Arrivals are open-loop (a fixed schedule, not "next request
when the last answered"), so a slow server meets the same offered load.

Seeding goes through the real APIs: ``--accounts`` panel accounts sign up
(POST /api/auth/signup), each adds a domain verified through a DNS stand-in
(tests/mail/dns_server.py: DNS is a third party), three addresses and a
sending API key. The CMS data set is cms_delivery.py's SQL (10,000 entries),
plus an editor session row as tests/content/factories.py makes one. The
gateway believes X-Forwarded-For from the loopback (TRUSTED_PROXIES), and
each simulated person sends their own address, as behind a reverse proxy:
per-IP limits then apply per person, and with the per-principal limits left
at their defaults (10/s) no principal comes near its limit, so a 429 is an
error like any other.

Reports errors by class (any 5xx, refused or reset connection, timeout, 429,
an unexpected status, SMTP non-2xx, a sent message the sink never got, a
realtime event a subscriber never got; goal: none), p50/p99 per route
class, and every process's memory every 10 s (gateway processes: RSS;
PostgreSQL: the sum of its processes' PSS, so shared buffers count once)
with the growth from the first minute to the last (goal: flat).
--write-docs rewrites the "Whole product under load" section of
docs/performance.md. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import itertools
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import aiohttp
import aiosmtplib

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.cms_delivery import KEY as DELIVERY_KEY  # noqa: E402
from benchmarks.cms_delivery import seed as seed_cms  # noqa: E402
from benchmarks.performance_doc import replace_section  # noqa: E402
from benchmarks.processes import free_port, postgres_pids, process_cpu_seconds  # noqa: E402

SECTION = "Whole product under load"
SECRET = "load-test-secret-" + "x" * 40
PASSWORD = "load test password 1"
MAILBOX_PASSWORD = "load test mailbox password"
ENTRIES = 10_000
HOT = 200
# Entries the publisher toggles: away from the readers' hot slugs.
TOGGLED = range(5001, 5101)
SINK_DOMAIN = "example.org"
# Per second on the small host (see the docstring); multiplied by --scale.
SMALL_HOST = {
    "panel page views": 0.5,
    "CMS delivery reads": 5.0,
    "realtime subscribers (held open)": 5,
    "CMS publications (realtime events)": 0.1,
    "SMTP inbound messages": 0.5,
    "sending API sends": 0.2,
    "JMAP syncs (Email/changes + Email/get)": 0.5,
}
SAMPLE_SECONDS = 10.0
TIMEOUT = aiohttp.ClientTimeout(total=30)


# -- what is measured -----------------------------------------------------------------


@dataclass
class Stats:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: Counter[tuple[str, str]] = field(default_factory=Counter)
    examples: dict[tuple[str, str], str] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)

    def ok(self, route: str, started: float) -> None:
        self.latencies[route].append((time.perf_counter() - started) * 1000)

    def error(self, route: str, kind: str, detail: str = "") -> None:
        self.errors[(route, kind)] += 1
        self.examples.setdefault((route, kind), detail[:300])


def error_kind(exc: BaseException) -> str:
    if isinstance(exc, aiohttp.ClientConnectorError | ConnectionRefusedError):
        return "refused connection"
    if isinstance(exc, TimeoutError | asyncio.TimeoutError | aiosmtplib.SMTPTimeoutError):
        return "timeout"
    if isinstance(exc, aiohttp.ServerDisconnectedError | ConnectionResetError):
        return "connection reset"
    if isinstance(exc, aiosmtplib.SMTPConnectError):
        return "refused connection"
    if isinstance(exc, aiosmtplib.SMTPResponseException):
        return f"SMTP {exc.code}"
    return type(exc).__name__


def status_kind(status: int) -> str:
    if status >= 500:
        return f"5xx ({status})"
    if status == 429:
        return "429"
    return f"unexpected {status}"


class Http:
    """One aiohttp session for the load; every call timed and classed."""

    def __init__(self, base: str, stats: Stats) -> None:
        self.base = base
        self.stats = stats
        self.session = aiohttp.ClientSession(
            timeout=TIMEOUT,
            connector=aiohttp.TCPConnector(limit=2000),
            cookie_jar=aiohttp.DummyCookieJar(),  # each person sends their own cookie
        )

    async def call(
        self,
        route: str,
        method: str,
        path: str,
        *,
        expect: tuple[int, ...] = (200,),
        **kwargs: Any,
    ) -> Any:
        """The JSON (or text) answer; None after an error, which is counted."""
        started = time.perf_counter()
        try:
            async with self.session.request(method, self.base + path, **kwargs) as resp:
                body = await resp.read()
                if resp.status not in expect:
                    self.stats.error(route, status_kind(resp.status), f"{path}: {body[:200]!r}")
                    return None
                self.stats.ok(route, started)
                if resp.content_type == "application/json":
                    return json.loads(body)
                return body.decode(errors="replace")
        except Exception as exc:  # every failure is a counted error, never a crash
            self.stats.error(route, error_kind(exc), f"{path}: {exc!r}")
            return None

    async def close(self) -> None:
        await self.session.close()


# -- the people, addresses and keys ------------------------------------------------------


@dataclass
class Person:
    n: int
    ip: str
    email: str
    cookie: str = ""
    domain: str = ""
    domain_id: str = ""
    api_key: str = ""
    addresses: list[str] = field(default_factory=list)

    def headers(self, origin: str) -> dict[str, str]:
        return {
            "X-Forwarded-For": self.ip,
            "Cookie": f"svc_session={self.cookie}",
            "Origin": origin,
        }


async def seed_people(http: Http, dns: Any, count: int, origin: str) -> list[Person]:
    """Each person: sign up, a verified domain, three addresses, a sending key (real APIs)."""
    from tests.mail.sending_helpers import publish

    people = []
    for n in range(count):
        person = Person(n, f"10.77.{n // 200}.{n % 200 + 1}", f"owner{n}@example.com")
        xff = {"X-Forwarded-For": person.ip, "Origin": origin}
        async with http.session.post(
            http.base + "/api/auth/signup",
            json={"email": person.email, "password": PASSWORD},
            headers=xff,
        ) as resp:
            if resp.status != 201:
                sys.exit(f"signup: {resp.status} {await resp.text()}")
            person.cookie = resp.cookies["svc_session"].value
        h = person.headers(origin)
        person.domain = f"d{n}.example.net"
        domain = await http.call(
            "seed", "POST", "/api/domains", json={"name": person.domain}, headers=h, expect=(201,)
        )
        if domain is None:
            sys.exit(f"seeding failed: {dict(http.stats.examples)}")
        person.domain_id = domain["id"]
        url = f"/api/domains/{person.domain_id}"
        found = await http.call("seed", "GET", url + "/dns", headers=h)
        publish(dns, found["records"], ("spf", "dkim"))
        await http.call("seed", "POST", url + "/check", headers=h)
        for local in ("ann", "bob", "cy"):
            made = await http.call(
                "seed",
                "POST",
                url + "/addresses",
                json={"local_part": local, "password": MAILBOX_PASSWORD},
                headers=h,
                expect=(201,),
            )
            if made is None:
                sys.exit(f"seeding failed: {dict(http.stats.examples)}")
            person.addresses.append(f"{local}@{person.domain}")
        key = await http.call(
            "seed",
            "POST",
            "/api/api-keys",
            json={"name": "load", "permission": "full_access"},
            headers=h,
            expect=(201,),
        )
        if key is None:
            sys.exit(f"seeding failed: {dict(http.stats.examples)}")
        person.api_key = key["token"]
        people.append(person)
    return people


async def seed_editor(dsn: str) -> str:
    """A CMS session token for the 'bench' editor cms_delivery.seed created (factories' SQL)."""
    from datetime import UTC, datetime, timedelta

    from common.crypto import sha256_hex
    from common.db import Database
    from common.ids import random_id

    token = random_id()
    now = datetime.now(UTC)
    db = await Database.connect(dsn, size=1)
    try:
        await db.execute(
            "INSERT INTO content.sessions (token_hash, user_id, created_at, expires_at)"
            " VALUES (%s, 'bench', %s, %s)",
            (sha256_hex(token), now, now + timedelta(days=1)),
        )
    finally:
        await db.close()
    return token


# -- the third parties: DNS and the receiving SMTP server ---------------------------------


class Background:
    """An event loop in a thread for the stand-ins, so the load's loop cannot delay them."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Awaitable[Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)  # type: ignore[arg-type]

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


class Sink:
    """The remote SMTP server every send is relayed to: records each message's load token."""

    def __init__(self) -> None:
        self.received: dict[str, float] = {}
        self.messages = 0

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        head = envelope.content.split(b"\r\n\r\n", 1)[0].decode(errors="replace")
        for line in head.splitlines():
            if line.lower().startswith("subject:") and "load-send-" in line:
                token = line.split("load-send-", 1)[1].split()[0]
                self.received.setdefault(token, time.perf_counter())
        self.messages += 1
        return "250 OK"

    async def all_in(self, tokens: dict[str, float]) -> None:
        """Return once every token arrived (the sink runs in its own thread)."""
        while any(t not in self.received for t in tokens):  # noqa: ASYNC110
            await asyncio.sleep(0.5)


# -- the load's streams -------------------------------------------------------------------


async def at_rate(
    name: str,
    rate: float,
    until: float,
    make: Callable[[int], Coroutine[Any, Any, None]],
    stats: Stats,
    cap: int = 300,
) -> None:
    """Start ``make(n)`` ``rate`` times a second until ``until`` (open loop)."""
    if rate <= 0:
        return
    interval = 1.0 / rate
    running: set[asyncio.Task[None]] = set()
    next_at = time.perf_counter() + random.random() * interval
    for n in itertools.count():
        if next_at >= until:
            break
        await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
        next_at += interval
        if len(running) >= cap:
            # The server is this far behind: the offer is not kept up; say so.
            stats.skipped[name] += 1
            continue
        task = asyncio.create_task(make(n))
        running.add(task)
        task.add_done_callback(running.discard)
    if running:
        await asyncio.wait(running, timeout=60)


PANEL_SCREENS = [
    ("/", ["/api/overview", "/api/filters?per_page=10"]),
    ("/domains", ["/api/domains?page=1&per_page=25"]),
    ("/emails", ["/api/emails?limit=25"]),
    ("/api-keys", ["/api/api-keys"]),
    ("/account/sessions", ["/api/account/sessions"]),
]


def panel_view(
    http: Http, people: list[Person], origin: str
) -> Callable[[int], Coroutine[Any, Any, None]]:
    async def view(n: int) -> None:
        person = people[n % len(people)]
        page, calls = PANEL_SCREENS[n % len(PANEL_SCREENS)]
        h = person.headers(origin)
        if await http.call("panel: page (HTML)", "GET", page, headers=h) is None:
            return
        # The screen's module asks for its data together, as the browser does.
        await asyncio.gather(*(http.call("panel: API", "GET", c, headers=h) for c in calls))

    return view


def delivery_read(http: Http, ips: list[str]) -> Callable[[int], Coroutine[Any, Any, None]]:
    async def read(n: int) -> None:
        h = {"X-Api-Key": DELIVERY_KEY, "X-Forwarded-For": ips[n % len(ips)]}
        if n % 10 == 9:  # a list page now and then
            await http.call(
                "CMS delivery: list page", "GET", f"/cms/content/post?page={n % 10 + 1}&limit=20",
                headers=h,
            )  # fmt: skip
        else:
            slug = f"post-{random.randint(1, HOT)}"
            await http.call("CMS delivery: entry", "GET", f"/cms/content/post/{slug}", headers=h)

    return read


@dataclass
class Publication:
    entry: str
    event: str
    sent: float
    listening: frozenset[int]
    got: dict[int, float] = field(default_factory=dict)


class Realtime:
    """Subscribers on content:post, and the publications they must each hear."""

    def __init__(self, http: Http, ws_base: str, stats: Stats) -> None:
        self.http = http
        self.ws_base = ws_base
        self.stats = stats
        self.listening: set[int] = set()
        self.publications: list[Publication] = []
        self.latest: dict[tuple[str, str], Publication] = {}
        self.stop = asyncio.Event()
        self.all_listening = asyncio.Event()
        self.expected = 0

    async def subscriber(self, i: int, ip: str) -> None:
        while not self.stop.is_set():
            try:
                await self._listen(i, ip)
            except Exception as exc:
                self.stats.error("realtime: socket", error_kind(exc), repr(exc))
            finally:
                self.listening.discard(i)
            if not self.stop.is_set():
                self.stats.error("realtime: socket", "socket closed by the server")
                await asyncio.sleep(1)

    async def _listen(self, i: int, ip: str) -> None:
        h = {"X-Api-Key": DELIVERY_KEY, "X-Forwarded-For": ip}
        ticket = await self.http.call(
            "realtime: ticket", "POST", "/cms/realtime/delivery/ticket", headers=h, expect=(201,)
        )
        if ticket is None:
            await asyncio.sleep(1)
            return
        started = time.perf_counter()
        async with self.http.session.ws_connect(
            f"{self.ws_base}/cms/realtime?ticket={ticket['ticket']}", headers=h, heartbeat=30
        ) as ws:
            await ws.send_json({"action": "subscribe", "topic": "content:post"})
            stopping = asyncio.create_task(self.stop.wait())
            try:
                while True:
                    receiving = asyncio.create_task(ws.receive())
                    done, _ = await asyncio.wait(
                        {receiving, stopping}, return_when=asyncio.FIRST_COMPLETED
                    )
                    if stopping in done:
                        receiving.cancel()
                        return
                    msg = receiving.result()
                    if msg.type != aiohttp.WSMsgType.TEXT:
                        return  # closed: the caller counts it and reconnects
                    frame = json.loads(msg.data)
                    if frame.get("event") == "subscribed" or "subscribed" in frame.values():
                        self.stats.ok("realtime: connect + subscribe", started)
                        self.listening.add(i)
                        if len(self.listening) >= self.expected:
                            self.all_listening.set()
                    elif frame.get("topic") == "content:post" and "data" in frame:
                        self._heard(i, frame)
            finally:
                stopping.cancel()

    def _heard(self, i: int, frame: dict[str, Any]) -> None:
        publication = self.latest.get((str(frame["data"].get("id")), str(frame.get("event"))))
        if publication is None or i in publication.got:
            return
        now = time.perf_counter()
        publication.got[i] = now
        self.stats.latencies["realtime: event, PATCH to frame"].append(
            (now - publication.sent) * 1000
        )

    def publisher(self, editor: str, ip: str) -> Callable[[int], Coroutine[Any, Any, None]]:
        state: dict[str, str] = {}

        async def publish(n: int) -> None:
            entry = f"p{TOGGLED[n % len(TOGGLED)]}"
            status = "unpublished" if state.get(entry, "published") == "published" else "published"
            state[entry] = status
            sent = time.perf_counter()
            publication = Publication(entry, f"entry.{status}", sent, frozenset(self.listening))
            self.latest[(entry, publication.event)] = publication
            done = await self.http.call(
                "CMS admin: publish/unpublish",
                "PATCH",
                f"/cms/api/entries/{entry}",
                json={"status": status},
                headers={"Authorization": f"Bearer {editor}", "X-Forwarded-For": ip},
            )
            if done is not None:
                self.publications.append(publication)

        return publish

    def missed(self, settle: float) -> int:
        """Subscriber-events never heard, of publications at least ``settle`` s old."""
        cutoff = time.perf_counter() - settle
        return sum(len(p.listening - p.got.keys()) for p in self.publications if p.sent < cutoff)


def message(n: int, to: str, size: int = 10240) -> bytes:
    msg = EmailMessage()
    msg["From"] = f"someone{n % 97}@elsewhere.example"
    msg["To"] = to
    msg["Subject"] = f"inbound load message {n}"
    msg["Message-ID"] = f"<load-in-{n}@elsewhere.example>"
    msg["Date"] = "Mon, 01 Jan 2030 12:00:00 +0000"
    line = "The quick brown fox jumps over the lazy dog. " * 2
    msg.set_content((line + "\n") * max(1, size // (len(line) + 1)))
    return msg.as_bytes()


def smtp_inbound(
    port: int, addresses: list[str], stats: Stats
) -> Callable[[int], Coroutine[Any, Any, None]]:
    async def deliver(n: int) -> None:
        to = addresses[n % len(addresses)]
        started = time.perf_counter()
        try:
            # Each from one of 250 loopback addresses: many sending servers, not one
            # (the daemon caps connections per client address at 50).
            source = (f"127.0.{n // 250 % 250 + 1}.{n % 250 + 1}", 0)
            async with aiosmtplib.SMTP(
                hostname="127.0.0.1",
                port=port,
                start_tls=False,
                timeout=30,
                source_address=source,
            ) as client:
                errors, _ = await client.sendmail(
                    f"someone{n % 97}@elsewhere.example", [to], message(n, to)
                )
            if errors:
                stats.error("SMTP inbound: message", "SMTP refused recipient", repr(errors))
                return
            stats.ok("SMTP inbound: message", started)
        except Exception as exc:
            stats.error("SMTP inbound: message", error_kind(exc), repr(exc))

    return deliver


class Sends:
    def __init__(self, http: Http, people: list[Person], sink: Sink) -> None:
        self.http = http
        self.people = people
        self.sink = sink
        self.accepted: dict[str, float] = {}

    async def send(self, n: int) -> None:
        person = self.people[n % len(self.people)]
        token = f"{n}-{random.getrandbits(32):08x}"
        sent = time.perf_counter()
        answer = await self.http.call(
            "sending API: POST /api/emails",
            "POST",
            "/api/emails",
            json={
                "from": f"App <ann@{person.domain}>",
                "to": [f"user{n % 50}@{SINK_DOMAIN}"],
                "subject": f"load-send-{token} hello",
                "text": "A message from the load test.\n" * 20,
            },
            headers={"Authorization": f"Bearer {person.api_key}", "X-Forwarded-For": person.ip},
        )
        if answer is not None:
            self.accepted[token] = sent

    def undelivered(self) -> list[str]:
        return [t for t in self.accepted if t not in self.sink.received]

    def record_lags(self, stats: Stats) -> None:
        for token, sent in self.accepted.items():
            got = self.sink.received.get(token)
            if got is not None:
                stats.latencies["sending: API call to sink"].append((got - sent) * 1000)


JMAP_USING = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail"]


class JmapClient:
    def __init__(self, http: Http, address: str, ip: str) -> None:
        self.http = http
        creds = base64.b64encode(f"{address}:{MAILBOX_PASSWORD}".encode()).decode()
        self.headers = {"Authorization": f"Basic {creds}", "X-Forwarded-For": ip}
        self.account = ""
        self.state = ""

    async def start(self) -> bool:
        session = await self.http.call(
            "JMAP: session", "GET", "/.well-known/jmap", headers=self.headers
        )
        if session is None:
            return False
        account = session["primaryAccounts"]["urn:ietf:params:jmap:mail"]
        got = await self._api([["Email/get", {"accountId": account, "ids": []}, "g"]])
        if got is None:
            return False  # started again at the next sync
        self.account, self.state = account, got[0][1]["state"]
        return True

    async def _api(self, calls: list[Any]) -> list[Any] | None:
        answer = await self.http.call(
            "JMAP: sync (Email/changes + Email/get)",
            "POST",
            "/jmap",
            json={"using": JMAP_USING, "methodCalls": calls},
            headers=self.headers,
        )
        if answer is None:
            return None
        responses: list[Any] = answer["methodResponses"]
        for name, args, _ in responses:
            if name == "error":
                self.http.stats.error("JMAP: sync (Email/changes + Email/get)", "method error",
                                      json.dumps(args))  # fmt: skip
                return None
        return responses

    async def sync(self) -> None:
        if not self.account and not await self.start():
            return
        changes = {"resultOf": "c", "name": "Email/changes", "path": "/created"}
        got = await self._api(
            [
                ["Email/changes", {"accountId": self.account, "sinceState": self.state,
                                   "maxChanges": 200}, "c"],
                ["Email/get", {"accountId": self.account, "#ids": changes,
                               "properties": ["id", "subject", "from", "receivedAt", "keywords",
                                              "mailboxIds", "preview"]}, "g"],
            ]
        )  # fmt: skip
        if got is not None:
            self.state = got[0][1]["newState"]


def jmap_sync(clients: list[JmapClient]) -> Callable[[int], Coroutine[Any, Any, None]]:
    busy: set[int] = set()

    async def sync(n: int) -> None:
        i = n % len(clients)
        if i in busy:  # a client syncs one request at a time
            return
        busy.add(i)
        try:
            await clients[i].sync()
        finally:
            busy.discard(i)

    return sync


# -- memory -------------------------------------------------------------------------------


def children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return sorted(found)


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def pss_mb(pid: int, kind: str = "Pss") -> float:
    """Proportional set size (shared pages divided among their users); Pss_Anon, Pss_Shmem."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith(kind + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class Memory:
    def __init__(self, gateway: int, db_pids: Callable[[], list[int]]) -> None:
        self.gateway = gateway
        self.db_pids = db_pids
        self.names = {gateway: "gateway supervisor"}
        for n, pid in enumerate(children(gateway), 1):
            self.names[pid] = f"gateway process {n}"
        self.samples: list[tuple[float, dict[str, float]]] = []
        self.backends: list[int] = []
        self.cpu_start: dict[str, float] = {}
        self.cpu: dict[str, float] = {}

    def cpu_seconds(self) -> dict[str, float]:
        """CPU seconds so far: each gateway process, PostgreSQL, the load generator."""
        found = {name: process_cpu_seconds(pid) for pid, name in self.names.items()}
        found["PostgreSQL (all processes)"] = sum(process_cpu_seconds(p) for p in self.db_pids())
        found["load generator (this script)"] = process_cpu_seconds(os.getpid())
        return found

    def sample(self, t: float) -> None:
        row = {name: rss_mb(pid) for pid, name in self.names.items()}
        pids = self.db_pids()
        row["PostgreSQL (all processes, PSS)"] = sum(pss_mb(p) for p in pids)
        # Its own memory, and the shared buffers it has touched so far (a cache that
        # fills up to shared_buffers as more of the data is read: not a leak).
        row["PostgreSQL private"] = sum(pss_mb(p, "Pss_Anon") for p in pids)
        row["PostgreSQL shared buffers"] = sum(pss_mb(p, "Pss_Shmem") for p in pids)
        self.backends.append(len(pids))
        self.samples.append((t, row))

    async def run(self, stop: asyncio.Event, started: float) -> None:
        self.cpu_start = self.cpu_seconds()
        while not stop.is_set():
            self.sample(time.perf_counter() - started)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), SAMPLE_SECONDS)
        self.sample(time.perf_counter() - started)
        # A backend that exited took its CPU with it: PostgreSQL's is a lower bound.
        end = self.cpu_seconds()
        self.cpu = {k: v - self.cpu_start.get(k, 0.0) for k, v in end.items()}


# -- the run ------------------------------------------------------------------------------


def start_gateway(
    dsn: str, home: Path, port: int, smtp_port: int, dns: str, sink: int, workers: int
) -> Any:
    import subprocess

    env = {
        **{k: v for k, v in os.environ.items() if k not in ("APP_ENV", "NODE_ENV")},
        "DATABASE_URL": dsn,
        "PORT": str(port),
        "HOST": "127.0.0.1",
        "PUBLIC_URL": f"http://127.0.0.1:{port}",
        "SECRET": SECRET,
        "APP_ENV": "production",
        "DATA_DIR": str(home / "var"),
        "WEB_CONCURRENCY": str(workers),
        "TRUSTED_PROXIES": "127.0.0.1/32",
        "SMTP_HOST": "127.0.0.1",
        "SMTP_PORT": str(smtp_port),
        "SMTP_HOSTNAME": "mx.load.test",
        "MAIL_HOSTNAME": "mx.load.test",
        "SUBMISSION_ENABLED": "false",
        "DNS_RESOLVERS": dns,
        "DNS_TIMEOUT": "2",
        "OUTBOUND_RELAY": f"127.0.0.1:{sink}",
        "OUTBOUND_MTA_STS": "false",
    }
    log = open(home / "gateway.log", "wb")  # noqa: SIM115 (lives as long as the process)
    return subprocess.Popen(
        [sys.executable, "-m", "gateway"], cwd=ROOT, env=env, stdout=log, stderr=log
    )


async def wait_ready(http: Http, proc: Any, home: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"the gateway exited:\n{(home / 'gateway.log').read_text()[-3000:]}")
        with contextlib.suppress(OSError, aiohttp.ClientError):
            async with http.session.get(http.base + "/healthz") as r:
                if r.status == 200:
                    await asyncio.sleep(2.0)  # let every process bind
                    return
        await asyncio.sleep(0.3)
    sys.exit("the gateway did not start")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def drive(args: argparse.Namespace, home: Path) -> str:
    from aiosmtpd.controller import Controller

    from common.embedded_pg import EmbeddedPostgres
    from tests.mail.dns_server import DnsServer

    stats = Stats()
    pg = EmbeddedPostgres(home / "pgdata", delete_on_stop=True)
    await asyncio.to_thread(pg.start)
    background = Background()
    dns = DnsServer()
    background.run(dns.start())
    sink = Sink()
    sink_port = free_port()
    controller = Controller(sink, hostname="127.0.0.1", port=sink_port)
    controller.start()
    gateway = None
    try:
        dsn = await asyncio.to_thread(pg.ensure_database, "load")
        print("seeding the CMS (SQL, as benchmarks/cms_delivery.py) ...", flush=True)
        await seed_cms(dsn, ENTRIES)
        editor = await seed_editor(dsn)
        port, smtp_port = free_port(), free_port()
        gateway = start_gateway(
            dsn, home, port, smtp_port, dns.resolver_setting, sink_port, args.workers
        )
        origin = f"http://127.0.0.1:{port}"
        http = Http(origin, stats)
        try:
            await wait_ready(http, gateway, home)
            print(f"seeding {args.accounts} accounts through the API ...", flush=True)
            people = await seed_people(http, dns, args.accounts, origin)
            report = await load(args, http, people, editor, smtp_port, sink, gateway, pg, stats)
        finally:
            await http.close()
    finally:
        if gateway is not None:
            gateway.terminate()
            try:
                await asyncio.to_thread(gateway.wait, 60)
            except Exception:
                gateway.kill()
        controller.stop()
        background.run(dns.stop())
        background.stop()
        await asyncio.to_thread(pg.stop)
    return report


async def load(
    args: argparse.Namespace,
    http: Http,
    people: list[Person],
    editor: str,
    smtp_port: int,
    sink: Sink,
    gateway: Any,
    pg: Any,
    stats: Stats,
) -> str:
    scale = args.scale
    seconds = args.minutes * 60
    ws_base = http.base.replace("http://", "ws://")
    addresses = [a for p in people for a in p.addresses]
    ips = [p.ip for p in people]
    realtime = Realtime(http, ws_base, stats)
    subscribers = round(SMALL_HOST["realtime subscribers (held open)"] * scale)
    realtime.expected = subscribers
    jmap_clients = [
        JmapClient(http, addresses[i % len(addresses)], ips[i % len(ips)])
        for i in range(round(SMALL_HOST["JMAP syncs (Email/changes + Email/get)"] * 10 * scale))
    ]
    sends = Sends(http, people, sink)
    memory = Memory(gateway.pid, postgres_pids(pg.pgdata))
    listeners = [
        asyncio.create_task(realtime.subscriber(i, f"10.88.{i // 200}.{i % 200 + 1}"))
        for i in range(subscribers)
    ]
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(realtime.all_listening.wait(), 30)
    print(
        f"{len(realtime.listening)} of {subscribers} realtime subscribers listening;"
        f" load for {args.minutes:g} minutes ...",
        flush=True,
    )
    started = time.perf_counter()
    until = started + seconds
    sampling = asyncio.Event()
    sampler = asyncio.create_task(memory.run(sampling, started))
    streams = [
        at_rate("panel", SMALL_HOST["panel page views"] * scale, until,
                panel_view(http, people, http.base), stats),
        at_rate("delivery", SMALL_HOST["CMS delivery reads"] * scale, until,
                delivery_read(http, ips), stats),
        at_rate("publish", SMALL_HOST["CMS publications (realtime events)"] * scale, until,
                realtime.publisher(editor, "10.99.0.1"), stats),
        at_rate("smtp", SMALL_HOST["SMTP inbound messages"] * scale, until,
                smtp_inbound(smtp_port, addresses, stats), stats),
        at_rate("send", SMALL_HOST["sending API sends"] * scale, until, sends.send, stats),
        at_rate("jmap", SMALL_HOST["JMAP syncs (Email/changes + Email/get)"] * scale, until,
                jmap_sync(jmap_clients), stats),
    ]  # fmt: skip
    progress = asyncio.create_task(_progress(stats, started, seconds))
    lag = asyncio.create_task(_loop_lag(stats))
    await asyncio.gather(*streams)
    progress.cancel()
    lag.cancel()
    load_seconds = time.perf_counter() - started
    sampling.set()
    await sampler
    # What is still on its way: the sink and the sockets get time to catch up.
    if sends.undelivered():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(sink.all_in(sends.accepted), args.drain)
    await asyncio.sleep(min(5.0, args.drain))
    never = sends.undelivered()
    if never:
        stats.error(
            "sending: API call to sink", "sent, never delivered to the sink", ",".join(never[:5])
        )
        stats.errors[("sending: API call to sink", "sent, never delivered to the sink")] = len(
            never
        )
    missed = realtime.missed(settle=5.0)
    if missed:
        stats.errors[("realtime: event, PATCH to frame", "event never received")] = missed
    sends.record_lags(stats)
    realtime.stop.set()
    await asyncio.wait(listeners, timeout=10)
    log_text = await asyncio.to_thread(Path(args.home, "gateway.log").read_text, errors="replace")
    return report(args, stats, memory, load_seconds, realtime, sends, sink, log_text)


async def _loop_lag(stats: Stats) -> None:
    """How late this script's own event loop wakes up: its share of every latency."""
    while True:
        asked = time.perf_counter()
        await asyncio.sleep(0.1)
        stats.latencies["load generator: event-loop lag"].append(
            (time.perf_counter() - asked - 0.1) * 1000
        )


async def _progress(stats: Stats, started: float, seconds: float) -> None:
    while True:
        await asyncio.sleep(60)
        done = sum(len(v) for v in stats.latencies.values())
        errors = sum(stats.errors.values())
        print(
            f"  {time.perf_counter() - started:5.0f} of {seconds:.0f} s: {done} ok, {errors}"
            f" errors, load average {os.getloadavg()[0]:.1f}",
            flush=True,
        )


def report(
    args: argparse.Namespace,
    stats: Stats,
    memory: Memory,
    seconds: float,
    realtime: Realtime,
    sends: Sends,
    sink: Sink,
    log_text: str,
) -> str:
    lines = [
        f"Run: `benchmarks/load.py --minutes {args.minutes:g} --scale {args.scale:g} --workers"
        f" {args.workers} --accounts {args.accounts}` on {os.cpu_count()} CPUs"
        f" ({platform.machine()}, Python {platform.python_version()}),"
        f" {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {seconds:.0f} s of load."
        " The load generator, the gateway and PostgreSQL share the machine with other"
        f" people's work (load average {os.getloadavg()[0]:.1f} at the end of the run,"
        f" {args.load_before:.1f} before it started).",
        "",
        "Offered load (per second, " + f"{args.scale:g} x the small host):",
        "",
        "| stream | small host | this run |",
        "|---|---|---|",
    ]
    for name, rate in SMALL_HOST.items():
        lines.append(f"| {name} | {rate:g} | {rate * args.scale:g} |")
    lines += [
        "",
        "| route class | requests | per second | p50 ms | p99 ms |",
        "|---|---|---|---|---|",
    ]
    for route in sorted(stats.latencies):
        if route == "seed":
            continue
        values = stats.latencies[route]
        if not values:
            continue
        lines.append(
            f"| {route} | {len(values):,} | {len(values) / seconds:.1f} |"
            f" {statistics.median(values):.1f} | {pct(values, 0.99):.1f} |"
        )
    errors = {k: v for k, v in stats.errors.items() if k[0] != "seed"}
    lines += ["", f"Errors: **{sum(errors.values())}** (goal: none)."]
    if errors:
        lines += ["", "| route class | error | count | first seen |", "|---|---|---|---|"]
        for (route, kind), count in sorted(errors.items()):
            example = stats.examples.get((route, kind), "").replace("|", "/").replace("\n", " ")
            lines.append(f"| {route} | {kind} | {count} | {example[:160]} |")
    if stats.skipped:
        lines += ["", "Arrivals not started because 300 of the stream were still waiting:"]
        lines += [f"- {name}: {n}" for name, n in stats.skipped.items()]
    lines += [
        "",
        f"Sends accepted: {len(sends.accepted)}, received by the sink: "
        f"{len(sends.accepted) - len(sends.undelivered())}; publications:"
        f" {len(realtime.publications)}, each to every listening subscriber.",
        f"Gateway log: {log_text.count(' ERROR ')} ERROR lines,"
        f" {log_text.count('Traceback')} tracebacks.",
        "",
    ]
    lines += [
        "CPU during the load (cores busy on average; the machine has"
        f" {os.cpu_count()}): "
        + ", ".join(f"{name} {cpu / seconds:.2f}" for name, cpu in memory.cpu.items())
        + ".",
        "",
    ]
    lines += memory_table(memory)
    return "\n".join(lines)


def memory_table(memory: Memory) -> list[str]:
    if not memory.samples:
        return []
    names = list(memory.samples[0][1])
    first = [row for t, row in memory.samples if t <= 60] or [memory.samples[0][1]]
    last_t = memory.samples[-1][0]
    last = [row for t, row in memory.samples if t >= last_t - 60]
    lines = [
        f"Memory (MB) every {SAMPLE_SECONDS:g} s; gateway processes RSS. PostgreSQL had"
        f" {min(memory.backends)} to {max(memory.backends)} processes.",
        "",
        "| process | first minute | last minute | growth | min | max |",
        "|---|---|---|---|---|---|",
    ]
    for name in names:
        a = statistics.mean(r[name] for r in first)
        b = statistics.mean(r[name] for r in last)
        every = [r[name] for _, r in memory.samples]
        lines.append(
            f"| {name} | {a:.1f} | {b:.1f} | {b - a:+.1f} ({(b - a) / a:+.1%}) |"
            f" {min(every):.1f} | {max(every):.1f} |"
            if a
            else f"| {name} | - | - | - | - | - |"
        )
    lines += ["", "Over time (MB):", "", "| s | " + " | ".join(names) + " |"]
    lines.append("|---" * (len(names) + 1) + "|")
    step = max(1, len(memory.samples) // 20)  # at most about 20 rows in the document
    for t, row in memory.samples[::step]:
        lines.append(f"| {t:.0f} | " + " | ".join(f"{row[n]:.1f}" for n in names) + " |")
    return lines


READING = """\
Reading the numbers: latencies are client-side, from when the request was
started on its schedule (open loop), so they include any time it waited for
a connection, a worker or a CPU. On a shared machine the CPU line says how much
of the two cores the product actually got; the load generator's event-loop
lag says how much of each latency is the generator's own. "Arrivals not
started" counts requests the generator dropped because 300 of that stream
were still waiting: the server did not keep up with the offer. Memory: the
gateway processes' RSS rises while a burst of requests waits (each holds its
buffers) and falls back after it; the figure to watch is the level between
bursts. PostgreSQL's shared buffers grow as more of the data is read, up to
shared_buffers: a cache filling, not a leak; its private memory should stay
flat once every backend has warmed up.
"""


def write_docs(body: str) -> None:
    intro = (__doc__ or "").split("\n\n", 2)[2].split("--write-docs")[0].strip()
    replace_section(
        SECTION,
        f"What `benchmarks/load.py` does:\n\n```text\n{intro}\n```\n\n{body}\n\n{READING}",
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--scale", type=float, default=10.0, help="times the small host's load")
    parser.add_argument("--workers", type=int, default=2, help="gateway serving processes")
    parser.add_argument("--accounts", type=int, default=20, help="panel accounts (principals)")
    parser.add_argument(
        "--drain", type=float, default=60.0, help="seconds to wait for the sink afterwards"
    )
    parser.add_argument("--keep-log", help="copy the gateway's log here")
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    args.load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="load-") as name:
        args.home = name
        try:
            body = asyncio.run(drive(args, Path(name)))
        finally:
            log = Path(name, "gateway.log")
            if args.keep_log and log.exists():
                Path(args.keep_log).write_bytes(log.read_bytes())
    print(body)
    if args.write_docs:
        write_docs(body)


if __name__ == "__main__":
    main()
