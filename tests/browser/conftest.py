"""Browser tests: Debian's chromium, driven by Playwright, against the real gateway.

The browser is the system's (``make browser`` installs Debian's chromium when
missing); Playwright's own browser download is never used. Without chromium
these tests skip with the reason, except in CI (``CI`` set), where a missing
browser is a failure. Every screen a test reaches goes through :meth:`Screens.check`:
an axe-core scan (serious or critical violations fail), no Content-Security-Policy
report and no request to another origin, and screenshots at a phone's and a
desktop's width under ``var/browser/`` (gitignored; ``BROWSER_ARTIFACTS`` moves it).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.conftest import ROOT, GatewayProcess, free_port

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = Path(os.environ.get("BROWSER_ARTIFACTS", ROOT / "var" / "browser"))
# The switches keep a headless run quiet and offline: no sandbox (root in a
# container), no GPU, no QUIC, no first-run, sync, updates or background fetches.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
NARROW = {"width": 390, "height": 844}
WIDE = {"width": 1280, "height": 800}
BLOCKING_IMPACTS = ("serious", "critical")
HIGH_LIMITS = {
    "RATE_LIMIT_PER_SECOND": "100000",
    "RATE_LIMIT_BURST": "100000",
    "AUTH_RATE_LIMIT_PER_SECOND": "100000",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.process)
            if CHROMIUM is None and not os.environ.get("CI"):
                item.add_marker(
                    pytest.mark.skip(reason="chromium is not installed (make browser installs it)")
                )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    # Lets the screens fixture know, at teardown, that the test failed.
    report = yield
    if report.when == "call":
        item.stash[FAILED] = report.failed
    return report


FAILED = pytest.StashKey[bool]()


@pytest.fixture
def browser(gateway: GatewayProcess) -> Iterator[Any]:
    """Chromium for one test. Playwright's sync API marks an event loop as running
    on this thread while it is open, so it opens after the asyncio-based fixtures
    (the database) and closes with the test, leaving later async tests alone."""
    if CHROMIUM is None:
        pytest.fail("CI runs the browser tests: chromium must be installed (make browser)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = launch_chromium(pw, gateway, CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def launch_chromium(pw: Any, gateway: GatewayProcess, args: list[str]) -> Any:
    """Chromium, started while the gateway (started without waiting) boots, then
    the gateway's health awaited: the two start-ups overlap instead of adding up."""
    # launch() gives every run a fresh, throw-away profile (user-data-dir).
    chromium = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=args)
    try:
        gateway.wait_healthy()
    except BaseException:
        chromium.close()
        raise
    return chromium


@pytest.fixture
def gateway_env() -> dict[str, str]:
    """More settings for the gateway; a test module overrides it (DNS stand-ins)."""
    return {}


@pytest.fixture
def gateway(
    gateway_process: Callable[..., GatewayProcess], database_url: str, gateway_env: dict[str, str]
) -> GatewayProcess:
    """The real gateway process on its own database, its public URL its own address."""
    return start_gateway(gateway_process, database_url, **gateway_env)


def start_gateway(
    gateway_process: Callable[..., GatewayProcess], database_url: str, **env: str
) -> GatewayProcess:
    """The ``gateway`` fixture's process; a test module overriding it adds its own ``env``.

    Not yet healthy: the ``browser`` fixture waits for it once chromium is up."""
    port = free_port()
    return gateway_process(  # type: ignore[no-any-return]
        wait=False,
        env={
            "DATABASE_URL": database_url,
            "PORT": str(port),
            "PUBLIC_URL": f"http://127.0.0.1:{port}",
            # A development instance logs the links it mails, as `make run` does
            # for a person; the tests follow them from the log (helpers.mailed_link).
            "APP_ENV": "development",
            **HIGH_LIMITS,
            **env,
        },
    )


@dataclass
class Screens:
    """One browser tab on the gateway, and the checks every screen gets."""

    page: Any
    origin: str
    test_name: str
    problems: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    # Minor and moderate axe findings: reported, not failing.
    violations: list[str] = field(default_factory=list)
    # Origins the test expects the browser to reach (an OAuth client's redirect URI).
    allowed: set[str] = field(default_factory=set)

    def check(self, name: str) -> None:
        """Scan the screen now shown with axe-core, in light and dark, and save screenshots."""
        self.page.wait_for_load_state("networkidle")
        folder = ARTIFACTS / self.test_name
        folder.mkdir(parents=True, exist_ok=True)
        for scheme in ("light", "dark"):
            self.page.emulate_media(color_scheme=scheme)
            self._axe(f"{name} ({scheme})")
            shots = (("narrow", NARROW), ("wide", WIDE)) if scheme == "light" else (("wide", WIDE),)
            for label, size in shots:
                self.page.set_viewport_size(size)
                suffix = "" if scheme == "light" else "-dark"
                path = folder / f"{name}-{label}{suffix}.png"
                self.page.screenshot(path=str(path), full_page=True)
            self.page.set_viewport_size(WIDE)
        self.page.emulate_media(color_scheme="light")
        assert not self.problems, "\n".join(self.problems)
        self.checked.append(name)

    def _axe(self, name: str) -> None:
        from axe_playwright_python.sync_playwright import Axe

        results = Axe().run(self.page)
        blocking = [
            f"{v['id']} ({v['impact']}): {v['help']} at "
            + ", ".join(str(n["target"]) for n in v["nodes"])
            for v in results.response["violations"]
            if v.get("impact") in BLOCKING_IMPACTS
        ]
        assert not blocking, f"axe on {name}:\n" + "\n".join(blocking)
        self.violations.extend(
            f"{name}: {v['id']} ({v['impact']})" for v in results.response["violations"]
        )


@pytest.fixture
def screens(
    gateway: GatewayProcess, browser: Any, request: pytest.FixtureRequest
) -> Iterator[Callable[[], Screens]]:
    """Opens tabs (each its own context: its own cookies) that report CSP and foreign requests."""
    contexts: list[Any] = []
    tabs: list[Screens] = []

    def open_tab() -> Screens:
        context = browser.new_context(base_url=gateway.base_url, viewport=WIDE)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(10_000)
        tab = Screens(page, gateway.base_url, request.node.name)

        def on_console(message: Any) -> None:
            # The browser reports each blocked script, style or connection here.
            if "Content Security Policy" in message.text:
                tab.problems.append(f"console: {message.text}")

        def on_request(req: Any) -> None:
            origin = "{0.scheme}://{0.netloc}".format(urlsplit(req.url))
            if req.url.startswith("http") and origin not in {gateway.base_url, *tab.allowed}:
                tab.problems.append(f"request to another origin: {req.url}")

        page.on("console", on_console)
        page.on("pageerror", lambda exc: tab.problems.append(f"script error: {exc}"))
        page.on("request", on_request)
        tabs.append(tab)
        return tab

    yield open_tab
    for tab in tabs:
        for finding in tab.violations:
            print(f"axe (not blocking): {finding}")
    failed = request.node.stash.get(FAILED, False)
    for number, context in enumerate(contexts):
        if failed:
            # What the person saw when it failed: the page and its text.
            folder = ARTIFACTS / request.node.name
            folder.mkdir(parents=True, exist_ok=True)
            for page in context.pages:
                page.screenshot(path=str(folder / f"failure-{number}.png"), full_page=True)
                text = page.url + "\n" + page.inner_text("body")
                (folder / f"failure-{number}.txt").write_text(text)
                print(f"failed on {text}")
        context.close()
