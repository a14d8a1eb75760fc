"""The CMS admin with an editor's real amount of content (docs/content.md, "Long lists").

One site, seeded in one transaction: 600 entries of one type (drafts, scheduled
drafts, published), 250 media items, 40 people, 300 tags, 12 social accounts
and 150 webhook delivery attempts. Each list screen is walked as an editor
would: paging to the last page and back, a page past the end, a search
narrowing to one entry that is the one opened, sort and filter, opening an
entry from page 22 and coming back to the same rows and scroll position, the
term picker narrowed by typing, the media library, people, taxonomies, social
accounts and a webhook's attempts. Throughout: no console error, no API answer
of 4xx or 5xx, never every row in the page at once, and each screen's API
requests on load counted (a list must not read once per row).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from io import BytesIO
from typing import Any

import psycopg2
import pytest
from PIL import Image
from playwright.sync_api import Page, expect

from tests.browser.cms import OWNER, module_gateway, owner_api, signed_in
from tests.browser.conftest import Screens
from tests.conftest import GatewayProcess

__all__ = ["module_gateway"]  # the module-scoped fixture, used through `gateway`

ENTRIES = 600
DRAFTS = 200  # every third entry; half of them scheduled
MEDIA = 250
PEOPLE = 40
TERMS = 300
ACCOUNTS = 12
ATTEMPTS = 150
NEEDLE = 437  # "Zebra crossing notes": row 17 of page 22, newest first
NEEDLE_TITLE = "Zebra crossing notes"
# A screen's own requests on load: the page's data and the assistant tray's, never one per row.
MOST_CALLS_ON_LOAD = 5
PER_ROW = re.compile(r"/api/(entries|media|users|terms)/[^/?]+$")


@pytest.fixture
def gateway(module_gateway: GatewayProcess) -> GatewayProcess:
    return module_gateway


def png() -> bytes:
    buffer = BytesIO()
    Image.new("RGB", (16, 16), "teal").save(buffer, "PNG")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def site(module_gateway: GatewayProcess) -> dict[str, Any]:
    """The owner, the `article` type, one uploaded image and a webhook through the
    API (so sealed secrets and stored bytes are real); the rest straight to the
    database in one transaction: the setup is not what is walked."""
    cms = owner_api(module_gateway.base_url)
    cms.call(
        "POST", "/types", {"name": "article", "fields": [{"key": "body", "type": "text"}]}, 201
    )
    uploaded = cms.client.post("/media", files={"file": ("first.png", png(), "image/png")})
    assert uploaded.status_code == 201, uploaded.text
    # Subscribed to purges only: the walk's own saves add no attempt to the 150 seeded.
    hook = cms.call(
        "POST",
        "/webhooks",
        {"name": "Rebuild", "url": "https://hooks.example/rebuild", "events": ["entry.purged"]},
        201,
    )
    return {"cms": cms, **seed(module_gateway.env["DATABASE_URL"], uploaded.json(), hook["id"])}


def seed(database_url: str, image: dict[str, Any], webhook_id: str) -> dict[str, Any]:
    now = datetime.now(UTC)
    with psycopg2.connect(database_url) as conn, conn.cursor() as cur:
        cur.execute("SELECT id FROM content.users WHERE email = %s", (OWNER,))
        owner = cur.fetchone()[0]  # type: ignore[index]
        cur.execute("SELECT id FROM content.content_types WHERE name = 'article'")
        type_id = cur.fetchone()[0]  # type: ignore[index]
        entries = []
        for i in range(1, ENTRIES + 1):
            draft = i % 3 == 0
            entries.append(
                (
                    f"e{i:04d}",
                    type_id,
                    f"article-{i:03d}",
                    NEEDLE_TITLE if i == NEEDLE else f"Article {i:03d}",
                    "draft" if draft else "published",
                    owner,
                    now + timedelta(days=i) if draft and i % 6 == 0 else None,
                    None if draft else now - timedelta(minutes=i),
                    now - timedelta(days=1, minutes=i),
                    # Entry 1 is the last changed: newest first puts 421–440 on page 22.
                    now - timedelta(minutes=i),
                )
            )
        cur.executemany(
            "INSERT INTO content.entries (id, type_id, slug, title, status, author_id,"
            " publish_at, published_at, created_at, updated_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            entries,
        )
        # The other 249 files share the uploaded one's bytes, so every thumbnail loads.
        cur.executemany(
            "INSERT INTO content.media (id, filename, type, size, sha256, width, height, url,"
            " folder, uploaded_by, created_at, updated_at)"
            " VALUES (%s, %s, 'image/png', %s, %s, 16, 16, %s, %s, %s, %s, %s)",
            [
                (
                    f"m{i:04d}",
                    "harbour-sunrise.png" if i == 123 else f"photo-{i:03d}.png",
                    image["size"],
                    image["sha256"],
                    image["url"],
                    f"album-{i % 7}",
                    owner,
                    now - timedelta(minutes=i),
                    now - timedelta(minutes=i),
                )
                for i in range(1, MEDIA)
            ],
        )
        cur.executemany(
            "INSERT INTO content.users (id, email, name, role, created_at, updated_at)"
            " VALUES (%s, %s, %s, %s, %s, %s)",
            [
                (
                    f"u{i:03d}",
                    f"person{i:02d}@example.com",
                    f"Person {i:02d}",
                    ("viewer", "author", "editor")[i % 3],
                    now,
                    now,
                )
                for i in range(1, PEOPLE)
            ],
        )
        cur.executemany(
            "INSERT INTO content.terms (id, taxonomy_id, slug, name, created_at, updated_at)"
            " VALUES (%s, 'tags', %s, %s, %s, %s)",
            [
                (
                    f"t{i:03d}",
                    f"tag-{i:03d}",
                    "Lapsang souchong" if i == 211 else f"Tag {i:03d}",
                    now,
                    now,
                )
                for i in range(1, TERMS + 1)
            ],
        )
        cur.execute(
            "INSERT INTO content.entry_terms (entry_id, term_id, position) VALUES (%s, 't005', 0)",
            (f"e{NEEDLE:04d}",),
        )
        # Connected accounts as a connection leaves them (their tokens are never read here).
        networks = (
            ["x"] * 3 + ["bluesky"] * 3 + ["mastodon"] * 3 + ["linkedin", "facebook", "pinterest"]
        )
        cur.executemany(
            "INSERT INTO content.social_accounts (id, network, remote_id, handle, name,"
            " tokens_sealed, attention, attention_at, created_at, updated_at)"
            " VALUES (%s, %s, %s, %s, %s, 'sealed', %s, %s, %s, %s)",
            [
                (
                    f"a{i:02d}",
                    network,
                    f"remote-{i}",
                    f"handle{i:02d}",
                    f"Account {i:02d}",
                    "token revoked" if i == 5 else None,
                    now if i == 5 else None,
                    now,
                    now,
                )
                for i, network in enumerate(networks, 1)
            ],
        )
        cur.executemany(
            "INSERT INTO content.webhook_attempts (webhook_id, message_id, event, attempt, at,"
            " status, ok, error, duration_ms) VALUES (%s, %s, 'entry.published', 1, %s, %s, %s,"
            " %s, 40)",
            [
                (
                    webhook_id,
                    f"msg-{i}",
                    now - timedelta(minutes=ATTEMPTS - i),
                    500 if i % 10 == 0 else 200,
                    i % 10 != 0,
                    "server error" if i % 10 == 0 else "",
                )
                for i in range(1, ATTEMPTS + 1)
            ],
        )
    return {"needle": f"e{NEEDLE:04d}"}


@dataclass
class Walk:
    """What the editor would notice going wrong, and the API requests made."""

    origin: str
    failed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)

    def attach(self, tab: Screens) -> Screens:
        tab.page.on("response", self.on_response)
        tab.page.on("console", self.on_console)
        return tab

    def on_console(self, message: Any) -> None:
        if message.type == "error":
            self.errors.append(f"{message.text} ({message.location.get('url')})")

    def on_response(self, response: Any) -> None:
        path = response.url.removeprefix(self.origin)
        if response.status >= 400:
            self.failed.append(f"{response.status} {response.request.method} {path}")
        if path.startswith("/cms/api/") and not path.startswith("/cms/api/auth/login"):
            self.calls.append(f"{response.request.method} {path.removeprefix('/cms')}")

    def visit(self, page: Page, path: str) -> None:
        """Another screen: its requests are counted from here."""
        self.calls.clear()
        page.goto(path)

    def on_load(self, page: Page, screen: str) -> list[str]:
        """The API requests since the last call: a screen's, once it has settled."""
        page.wait_for_load_state("networkidle")
        calls, self.calls = self.calls, []
        print(f"{screen}: {len(calls)} API requests on load: {calls}")
        # One record's read is a screen about that record; more is one per row.
        per_row = [c for c in calls if PER_ROW.search(c.split("?")[0])]
        assert len(per_row) <= 1, f"{screen} reads rows one by one: {per_row}"
        assert len(calls) <= MOST_CALLS_ON_LOAD, f"{screen}: {calls}"
        return calls

    def assert_clean(self) -> None:
        assert not self.failed, self.failed
        assert not self.errors, self.errors


def walker(
    screens: Callable[[], Screens], gateway: GatewayProcess, path: str
) -> tuple[Screens, Walk]:
    walk = Walk(gateway.base_url)
    tab = signed_in(lambda: walk.attach(screens()), OWNER, path)
    return tab, walk


def assert_scrolled_to(page: Page, y: int) -> None:
    """Polled from here: the admin's CSP refuses the eval wait_for_function's polling needs."""
    seen = None
    for _ in range(50):
        seen = page.evaluate("scrollY")
        if abs(seen - y) <= 2:
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"the list is scrolled to {seen}, not back to {y}")


def titles(page: Page) -> list[str]:
    return (
        page.get_by_role("table", name="Entries")
        .locator("tbody tr td:first-child")
        .all_inner_texts()
    )


def test_the_entries_list_pages_finds_and_keeps_its_place(
    screens: Callable[[], Screens], gateway: GatewayProcess, site: dict[str, Any]
) -> None:
    tab, walk = walker(screens, gateway, "/cms/admin/entries")
    page = tab.page
    rows = page.get_by_role("table", name="Entries").locator("tbody tr")
    pager = page.get_by_role("navigation", name="Pages of entries")
    expect(pager).to_contain_text("Page 1 of 30 · 1–20 of 600 entries")
    # Twenty rows in the page, never the 600.
    expect(rows).to_have_count(20)
    assert page.locator("tr").count() == 21
    calls = walk.on_load(page, "entries")
    assert [c for c in calls if c.startswith("GET /api/entries")] == [
        "GET /api/entries?sort=-updatedAt&page=1&limit=20"
    ]
    tab.check("entries-page-1")

    # The last page is one press away, and says which rows it holds.
    pager.get_by_role("button", name="Last page").click()
    expect(pager).to_contain_text("Page 30 of 30 · 581–600 of 600 entries")
    expect(page).to_have_url(re.compile(r"[?&]page=30\b"))
    assert titles(page)[-1] == "Article 600"
    expect(pager.get_by_role("button", name="Next page")).to_be_disabled()
    expect(page.get_by_role("table", name="Entries")).to_be_focused()
    pager.get_by_role("button", name="Previous page").click()
    expect(pager).to_contain_text("Page 29 of 30 · 561–580 of 600 entries")
    # Each page is a step in the history: Back goes to the page before.
    page.go_back()
    expect(pager).to_contain_text("Page 30 of 30")
    page.go_back()
    expect(pager).to_contain_text("Page 1 of 30")
    expect(rows.first).to_have_text(re.compile("^Article 001"))

    # A link to a page past the end (entries trashed since) shows the last page, not "No entries".
    page.goto("/cms/admin/entries?page=99")
    expect(pager).to_contain_text("Page 30 of 30 · 581–600 of 600 entries")
    expect(page).to_have_url(re.compile(r"[?&]page=30\b"))

    # Opening an entry low on page 22 and coming back: the same rows, scrolled where they were.
    page.goto("/cms/admin/entries?page=22")
    expect(pager).to_contain_text("Page 22 of 30 · 421–440 of 600 entries")
    link = page.get_by_role("link", name=NEEDLE_TITLE)
    link.scroll_into_view_if_needed()
    scrolled = page.evaluate("scrollBy(0, 120), scrollY")
    assert scrolled > 0
    link.click()
    page.wait_for_url(f"**/admin/entries/{site['needle']}")
    expect(page.get_by_label("Title (required)")).to_have_value(NEEDLE_TITLE)
    page.go_back()
    expect(pager).to_contain_text("Page 22 of 30 · 421–440 of 600 entries")
    expect(page).to_have_url(re.compile(r"[?&]page=22\b"))
    assert_scrolled_to(page, scrolled)

    # A search narrows to one entry, and that entry is the one opened.
    page.get_by_label("Search").fill("zebra")
    expect(rows).to_have_count(1)
    expect(pager).to_contain_text("Page 1 of 1 · 1 entry")
    expect(page).to_have_url(re.compile(r"search=zebra"))
    page.get_by_role("link", name=NEEDLE_TITLE).click()
    page.wait_for_url(f"**/admin/entries/{site['needle']}")
    page.go_back()
    expect(page.get_by_label("Search")).to_have_value("zebra")
    expect(rows).to_have_count(1)

    # Sort and filter: each kept in the address, each undone by Back.
    page.get_by_label("Search").fill("")
    expect(pager).to_contain_text("1–20 of 600 entries")
    page.get_by_label("Sort by").select_option("title")
    expect(rows.first).to_have_text(re.compile("^Article 001"))
    page.get_by_label("Status").select_option("draft")
    expect(pager).to_contain_text(f"Page 1 of 10 · 1–20 of {DRAFTS} entries")
    expect(rows.filter(has_text="scheduled")).to_have_count(10)
    expect(page).to_have_url(re.compile(r"status=draft.*sort=title|sort=title.*status=draft"))
    tab.check("entries-drafts-by-title")
    # The drafts waiting for their time, on their own.
    page.get_by_label("Status").select_option("scheduled")
    expect(pager).to_contain_text(f"Page 1 of 5 · 1–20 of {DRAFTS // 2} entries")
    expect(rows.filter(has_text="scheduled")).to_have_count(20)
    page.go_back()
    expect(page.get_by_label("Status")).to_have_value("draft")
    page.go_back()
    expect(page.get_by_label("Status")).to_have_value("")
    expect(page.get_by_label("Sort by")).to_have_value("title")
    expect(pager).to_contain_text("1–20 of 600 entries")
    walk.assert_clean()


def test_the_term_picker_of_300_tags_is_searchable_and_read_at_once(
    screens: Callable[[], Screens], gateway: GatewayProcess, site: dict[str, Any]
) -> None:
    tab, walk = walker(screens, gateway, f"/cms/admin/entries/{site['needle']}")
    page = tab.page
    tags = page.get_by_role("group", name="Tags")
    expect(tags.get_by_role("checkbox")).to_have_count(TERMS)
    calls = walk.on_load(page, "entry editor")
    # Every taxonomy's terms in one request, not one per taxonomy.
    assert [c for c in calls if "/taxonomies" in c] == ["GET /api/taxonomies?include=terms"]
    find = tags.get_by_label("Find in Tags")
    find.fill("lapsang")
    # The term asked for, and the one the entry is filed under (never hidden by narrowing).
    expect(tags.get_by_role("checkbox").locator("visible=true")).to_have_count(2)
    expect(tags.get_by_role("status")).to_have_text(f"2 of {TERMS} terms shown.")
    find.press("Enter")  # narrows; does not save the entry
    tab.check("entry-term-picker")
    tags.get_by_label("Lapsang souchong").check()
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator("#save-status")).to_have_text(re.compile("Saved"))
    filed = site["cms"].call("GET", f"/entries/{site['needle']}")["terms"]
    assert sorted(t["name"] for t in filed) == ["Lapsang souchong", "Tag 005"]
    walk.assert_clean()


def test_media_people_taxonomies_social_accounts_and_webhook_attempts(
    screens: Callable[[], Screens], gateway: GatewayProcess, site: dict[str, Any]
) -> None:
    tab, walk = walker(screens, gateway, "/cms/admin/media")
    page = tab.page
    files = page.get_by_role("list", name="Files").locator(":scope > li")
    expect(page.get_by_role("status").filter(has_text="files").first).to_have_text(
        f"{MEDIA} files."
    )
    expect(files).to_have_count(24)
    walk.on_load(page, "media")
    page.get_by_role("button", name="Show older files").click()
    expect(files).to_have_count(48)
    page.get_by_label("Search").fill("harbour")
    expect(page.get_by_role("status").filter(has_text="found").first).to_have_text("1 file found.")
    expect(files).to_have_count(1)
    expect(page.get_by_role("form", name="Details of harbour-sunrise.png")).to_be_visible()
    tab.check("media-long")

    walk.visit(page, "/cms/admin/people")
    people = page.get_by_role("table", name="People").locator("tbody tr")
    expect(people).to_have_count(PEOPLE)
    expect(page.get_by_role("navigation", name="Pages of people")).to_contain_text(
        f"{PEOPLE} people"
    )
    walk.on_load(page, "people")
    tab.check("people-long")

    walk.visit(page, "/cms/admin/taxonomies")
    page.get_by_label("Taxonomy", exact=True).select_option("tags")
    terms = page.locator(".tree > li")
    expect(terms).to_have_count(TERMS)
    expect(page.get_by_text(f"{TERMS} terms.")).to_be_visible()
    page.get_by_label("Find a term of Tags").fill("souchong")
    expect(terms.locator("visible=true")).to_have_count(1)
    expect(terms.locator("visible=true")).to_contain_text("Lapsang souchong")
    walk.on_load(page, "taxonomies")
    tab.check("taxonomies-long")

    walk.visit(page, "/cms/admin/social/settings")
    glance = page.get_by_role("table", name="Networks at a glance")
    for i in range(1, ACCOUNTS + 1):
        expect(glance).to_contain_text(f"@handle{i:02d}")
    expect(glance).to_contain_text("@handle05 needs attention")
    expect(page.locator("ul.accounts > li")).to_have_count(ACCOUNTS)
    walk.on_load(page, "social settings")
    tab.check("social-accounts-long")

    walk.visit(page, "/cms/admin/webhooks")
    expect(page.get_by_role("table", name="Webhooks")).to_contain_text("Rebuild")
    walk.on_load(page, "webhooks")
    page.get_by_role("button", name="Attempts of Rebuild").click()
    attempts = page.get_by_role("table", name="Attempts of Rebuild").locator("tbody tr")
    pages = page.get_by_role("navigation", name="Pages of attempts of Rebuild")
    expect(pages).to_contain_text(f"Page 1 of 8 · 1–20 of {ATTEMPTS} attempts")
    expect(attempts).to_have_count(20)
    pages.get_by_role("button", name="Last page").click()
    expect(pages).to_contain_text(f"Page 8 of 8 · 141–150 of {ATTEMPTS} attempts")
    # Newest first: the last page ends with the first attempt.
    expect(attempts).to_have_count(10)
    tab.check("webhook-attempts-long")
    walk.assert_clean()
