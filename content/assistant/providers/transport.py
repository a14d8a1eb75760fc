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
from content.assistant.providers.base import ProviderError


class Guard:
    """One call's address guard: hands each SDK its httpx client, remembers a refusal.

    A refusal is raised inside the transport as the HTTP library's own
    ConnectError, so each SDK reports it as it reports any failed connect;
    the provider module then asks :meth:`refused` whether that failure was
    the rule's, to answer ``refused`` with the reason rather than "unreachable".
    """

    def __init__(self, kind: str, *, allow_private: bool) -> None:
        self.kind = kind
        self.allow_private = allow_private
        self.refusal: str | None = None

    def refused(self) -> ProviderError | None:
        return ProviderError("refused", self.refusal) if self.refusal else None

    def sdk_client(self, timeout: httpx2.Timeout) -> httpx2.AsyncClient:
        """The httpx2 client handed to the openai and anthropic SDKs."""
        transport = self._install(httpx2.AsyncHTTPTransport(trust_env=False), httpcore2)
        return httpx2.AsyncClient(
            transport=transport, timeout=timeout, follow_redirects=False, trust_env=False
        )

    def ollama_options(self) -> dict[str, Any]:
        """The httpx keyword arguments handed to ollama.AsyncClient (it passes them to httpx)."""
        transport = self._install(httpx.AsyncHTTPTransport(trust_env=False), httpcore)
        return {"transport": transport, "follow_redirects": False, "trust_env": False}

    def _install(self, transport: Any, core: Any) -> Any:
        # httpx has no network_backend parameter: the transport's pool is rebuilt
        # with the guarded backend (the same TLS context).
        transport._pool = core.AsyncConnectionPool(
            ssl_context=transport._pool._ssl_context,
            network_backend=GuardedBackend(core.AnyIOBackend(), core.ConnectError, self),
            retries=0,
        )
        return transport


class GuardedBackend:
    """An httpcore(2) network backend connecting only to addresses the kind may reach."""

    def __init__(self, inner: Any, connect_error: type[Exception], guard: Guard) -> None:
        self._inner = inner
        self._connect_error = connect_error
        self._guard = guard

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> Any:
        try:
            found = await asyncio.wait_for(addresses.resolve(host, port), timeout)
        except (OSError, TimeoutError):
            raise self._connect_error(f"{host} could not be resolved") from None
        guard = self._guard
        problem = addresses.resolved_problem(
            guard.kind, host, found, allow_private=guard.allow_private
        )
        if problem:
            guard.refusal = problem
            raise self._connect_error(problem)
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
        raise self._connect_error("a provider is reached over TCP only")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)
