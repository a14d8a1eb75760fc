"""The DNS server and Cloudflare stand-in of tests/mail, for the gateway a browser test drives.

Playwright's sync API owns the test's thread, so the two servers run on an
asyncio loop of their own, on a background thread; the test fills their
records from its thread (plain dict updates).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import pytest
from aiohttp.test_utils import TestServer

from tests.mail.cloudflare_standin import PREFIX, CloudflareStandIn
from tests.mail.dns_server import DnsServer
from tests.mail.hosting_fixtures import CLOUDFLARE_TOKEN, hosting_env

T = TypeVar("T")


class StandIns:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.dns = DnsServer()
        self.cloudflare = CloudflareStandIn(CLOUDFLARE_TOKEN)
        self._server = TestServer(self.cloudflare.app(), host="127.0.0.1")
        self._run(self.dns.start())
        self._run(self._server.start_server())
        self.env = hosting_env(self.dns, str(self._server.make_url(PREFIX)))

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(10)

    def publish(self, records: list[dict[str, Any]]) -> None:
        """Puts records of the panel's record set (API shape) in the DNS server."""
        for record in records:
            value = record["value"]
            if record["type"] == "TXT":
                # Presentation form: quoted strings of at most 255 characters.
                value = " ".join(f'"{value[i : i + 255]}"' for i in range(0, len(value), 255))
            self.dns.add(record["name"], record["type"], value)

    def close(self) -> None:
        self._run(self._server.close())
        self._run(self.dns.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


@pytest.fixture
def stand_ins() -> Iterator[StandIns]:
    servers = StandIns()
    try:
        yield servers
    finally:
        servers.close()
