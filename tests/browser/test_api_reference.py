"""The API reference pages (/api/docs, /cms/api/docs, /oauth/docs, /jmap/docs):
Swagger UI from this origin under the strict policy, readable, accessible,
and "Try it out" answering from the running instance."""

from __future__ import annotations

from collections.abc import Callable

from tests.browser.conftest import Screens
from tests.conftest import GatewayProcess

PAGES = {
    "mail": "/api/docs",
    "content": "/cms/api/docs",
    "oauth": "/oauth/docs",
    "jmap": "/jmap/docs",
}


def test_each_reference_renders_and_tries_a_call_against_this_instance(
    screens: Callable[[], Screens], gateway: GatewayProcess
) -> None:
    tab = screens()
    page = tab.page
    for service, path in PAGES.items():
        page.goto(path)
        # Swagger UI drew the operations; the plain rendering made way for it.
        page.locator(".swagger-ui .opblock").first.wait_for()
        assert page.locator("#plain").is_hidden()
        assert page.locator(".swagger-ui .opblock").count() > 3
        tab.check(f"reference-{service}")

    # Try it out: the discovery document, answered by this instance.
    page.goto(PAGES["oauth"])
    operation = page.locator(".opblock").filter(has_text="/.well-known/oauth-authorization-server")
    operation.first.locator(".opblock-summary").click()
    page.get_by_role("button", name="Try it out").click()
    page.get_by_role("button", name="Execute").click()
    answer = page.locator(".live-responses-table tbody .response-col_status")
    answer.first.wait_for()
    assert answer.first.inner_text().strip().startswith("200")
    # Asked of this very instance, and its answer shown.
    asked = page.locator(".request-url").first.inner_text()
    assert gateway.base_url + "/.well-known/oauth-authorization-server" in asked
    assert '"issuer"' in page.locator(".live-responses-table tbody").first.inner_text()
    tab.check("reference-oauth-tried")


def test_the_plain_reference_reads_without_javascript(
    browser: object, gateway: GatewayProcess
) -> None:
    context = browser.new_context(base_url=gateway.base_url, java_script_enabled=False)  # type: ignore[attr-defined]
    page = context.new_page()
    page.goto(PAGES["content"])
    assert page.locator("#plain code", has_text="/cms/api/entries").count() >= 1
    context.close()
