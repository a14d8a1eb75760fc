"""The providers' HTTP connections: opened only to an address the SSRF rule allows, judged at connect.

The base URL is judged on save and, after DNS, before every call
(addresses.py); but an SDK left to itself resolves the name again when it
connects, and a name that answered a public address at the check can answer
169.254.169.254 a moment later (DNS rebinding). So every SDK is handed an
httpx client whose network backend resolves the host itself, judges every
address with :func:`addresses.allowed_address` (per kind), and connects to
the judged address. TLS still runs against the name: httpcore passes the
URL's host as ``server_hostname`` to ``start_tls``, so SNI and the
certificate check are the name's, not the address's.

The openai and anthropic SDKs speak httpx2/httpcore2, ollama's httpx/httpcore;
their network backend interfaces are the same, so one :class:`GuardedBackend`
wraps either. Redirects are never followed (a public answer must not bounce
the call, and its API key, elsewhere), proxies from the environment are not
used.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

import httpcore
import httpcore2
import httpx
import httpx2

from content.assistant.providers import addresses


class AddressRefused(ConnectionError):
    """The provider's name resolved, at connect, to an address its kind may not reach."""


class GuardedBackend:
    """An httpcore(2) network backend connecting only to addresses the kind may reach."""

    def __init__(
        self, inner: Any, connect_error: type[Exception], kind: str, *, allow_private: bool
    ) -> None:
        self._inner = inner
        self._connect_error = connect_error
        self.kind = kind
        self.allow_private = allow_private

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> Any:
        try:
            found = await asyncio.wait_for(addresses.resolve(host, port), timeout)
        except (OSError, TimeoutError):
            raise self._connect_error(f"{host} could not be resolved") from None
        if not found or any(
            not addresses.allowed_address(self.kind, a, allow_private=self.allow_private)
            for a in found
        ):
            raise AddressRefused(f"{host} resolves to an address this provider may not reach")
        failure: Exception | None = None
        for address in found:
            try:
                return await self._inner.connect_tcp(
                    address,
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except Exception as exc:  # this address failed; the next may answer
                failure = exc
        assert failure is not None
        raise failure

    async def connect_unix_socket(self, path: str, *args: Any, **kwargs: Any) -> Any:
        raise AddressRefused("a provider is reached over TCP only")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def _guard(transport: Any, core: Any, kind: str, allow_private: bool) -> Any:
    # httpx has no network_backend parameter: the transport's pool is rebuilt
    # with the guarded backend (same TLS context, one connection per call).
    transport._pool = core.AsyncConnectionPool(
        ssl_context=transport._pool._ssl_context,
        network_backend=GuardedBackend(
            core.AnyIOBackend(), core.ConnectError, kind, allow_private=allow_private
        ),
        retries=0,
    )
    return transport


def sdk_client(kind: str, *, allow_private: bool, timeout: httpx2.Timeout) -> httpx2.AsyncClient:
    """The httpx2 client handed to the openai and anthropic SDKs."""
    transport = _guard(httpx2.AsyncHTTPTransport(trust_env=False), httpcore2, kind, allow_private)
    return httpx2.AsyncClient(
        transport=transport, timeout=timeout, follow_redirects=False, trust_env=False
    )


def ollama_options(kind: str, *, allow_private: bool) -> dict[str, Any]:
    """The httpx keyword arguments handed to ollama.AsyncClient (it passes them to httpx)."""
    transport = _guard(httpx.AsyncHTTPTransport(trust_env=False), httpcore, kind, allow_private)
    return {"transport": transport, "follow_redirects": False, "trust_env": False}
