"""The CMS admin's editor in the browser: a type built in the field builder, an
entry written and published with rich text, an uploaded image, a reference and
a reordered list; a refused save marked on its input; revisions, the trash,
and two people on one entry. One gateway for the module (tests/browser/cms.py).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterator
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from playwright.sync_api import Locator, Page, expect

from tests.browser.cms import OWNER, PASSWORD, Cms, module_gateway, owner_api, signed_in
from tests.browser.conftest import Screens
from tests.conftest import GatewayProcess

EDITOR = "eddie@example.com"
# An entry's own page, not /entries/new: where the editor goes once it created one.
SAVED_ENTRY = re.compile(r".*/admin/entries/(?!new\b)[A-Za-z0-9_-]+(\?.*)?$")
__all__ = ["module_gateway"]  # the module-scoped fixture, used through `gateway`


@pytest.fixture
def gateway(module_gateway: GatewayProcess) -> GatewayProcess:
    return module_gateway


@pytest.fixture(scope="module")
def site(module_gateway: GatewayProcess) -> Iterator[dict[str, Any]]:
    """The owner, a `person` type with two entries, and an editor."""
    cms = owner_api(module_gateway.base_url)
    cms.call(
        "POST",
        "/types",
        {"name": "person", "label": "Person", "fields": [{"key": "role", "type": "text"}]},
        201,
    )
    people = {
        title: cms.call("POST", "/entries", {"type": "person", "title": title}, 201)["id"]
        for title in ("Ada Lovelace", "Grace Hopper")
    }
    cms.call(
        "POST",
        "/users",
        {"email": EDITOR, "password": PASSWORD, "name": "Eddie", "role": "editor"},
        201,
    )
    yield {"cms": cms, "people": people}


def image_bytes(colour: str) -> bytes:
    buffer = BytesIO()
    Image.new("RGB", (40, 30), colour).save(buffer, "PNG")
    return buffer.getvalue()


def png(path: Path, colour: str = "teal") -> Path:
    path.write_bytes(image_bytes(colour))
    return path


def add_field(page: Page, within: Locator, key: str, label: str, kind: str) -> Locator:
    """Adds a field row through the builder and returns it."""
    rows = within.locator(":scope > ol > li.item")
    count = rows.count()
    within.locator(":scope > .actions button").click()
    row = rows.nth(count)
    row.get_by_label("Key", exact=True).fill(key)
    row.get_by_label("Label", exact=True).fill(label)
    row.get_by_label("Field type").select_option(kind)
    return row


def make_article_type(tab: Screens) -> None:
    page = tab.page
    page.goto("/cms/admin/types/new")
    page.get_by_label("Name", exact=True).fill("article")
    page.locator("form > .row").first.get_by_label("Label", exact=True).fill("Article")
    fields = page.locator("form > fieldset.field")
    summary = add_field(page, fields, "summary", "Summary", "text")
    summary.get_by_label("Required").check()
    summary.get_by_label("Longest length").fill("140")
    add_field(page, fields, "body", "Body", "richtext")
    add_field(page, fields, "hero", "Hero image", "media")
    author = add_field(page, fields, "author", "Author", "reference")
    author.get_by_label("Entries of the type").select_option("person")
    steps = add_field(page, fields, "steps", "Steps", "list")
    nested = steps.locator("fieldset.field")
    step = add_field(page, nested, "label", "Label", "text")
    step.get_by_label("Required").check()
    add_field(page, nested, "link", "Link", "url")
    add_field(page, fields, "meta", "Metadata", "json")
    add_field(page, fields, "accent", "Accent", "color")
    tone = add_field(page, fields, "tone", "Tone", "select")
    tone.get_by_label("Choices").fill("calm|Calm\nloud|Loud")
    tab.check("type-builder")
    page.get_by_role("button", name="Create the type").click()
    page.wait_for_url("**/admin/types/article**")
    expect(page.get_by_role("status").filter(has_text="Created")).to_be_visible()
    tab.check("type-edit")
    page.get_by_role("navigation", name="Sections").get_by_role(
        "link", name="Content types"
    ).click()
    expect(page.get_by_role("link", name="Article")).to_be_visible()
    tab.check("types")


def test_build_a_type_then_write_and_publish_an_entry(
    screens: Callable[[], Screens], gateway: GatewayProcess, site: dict[str, Any], tmp_path: Path
) -> None:
    cms: Cms = site["cms"]
    tab = signed_in(screens, OWNER)
    page = tab.page
    make_article_type(tab)
    article = cms.call("GET", "/types/article")
    assert [f["key"] for f in article["fields"]] == [
        "summary", "body", "hero", "author", "steps", "meta", "accent", "tone",
    ]  # fmt: skip
    assert article["fields"][0] == {
        "key": "summary", "type": "text", "label": "Summary", "required": True, "maxLength": 140,
    }  # fmt: skip
    assert article["fields"][4]["fields"][1] == {"key": "link", "type": "url", "label": "Link"}
    assert article["fields"][7]["options"] == [
        {"value": "calm", "label": "Calm"},
        {"value": "loud", "label": "Loud"},
    ]

    page.goto("/cms/admin/entries/new?type=article")
    page.get_by_label("Title (required)").fill("Hello world")
    page.get_by_label("Summary (required)").fill("A first article")
    body = page.get_by_role("textbox", name="Body")
    body.click()
    page.keyboard.type("Hello ")
    page.get_by_role("button", name="Bold").click()
    expect(page.get_by_role("button", name="Bold")).to_have_attribute("aria-pressed", "true")
    page.keyboard.type("world")
    # The image is uploaded from the editor itself.
    hero = page.locator("fieldset", has=page.get_by_text("Hero image", exact=True))
    hero.locator("input[type=file]").set_input_files(str(png(tmp_path / "sunrise.png")))
    expect(hero.get_by_role("status")).to_have_text("Uploaded sunrise.png.")
    expect(hero.locator("figure img")).to_be_visible()
    # The reference picker searches entries of the target type; keys choose.
    author = page.get_by_role("combobox", name="Author")
    author.fill("Ada")
    expect(page.get_by_role("option", name="Ada Lovelace")).to_be_visible()
    author.press("ArrowDown")
    expect(page.get_by_role("option", name="Ada Lovelace")).to_have_attribute(
        "aria-selected", "true"
    )
    author.press("Enter")
    expect(page.get_by_role("list", name="Author: chosen")).to_contain_text("Ada Lovelace")
    # The list: two items, then the second moved up by keyboard.
    add_item = page.get_by_role("button", name="Add an item to Steps")
    add_item.click()
    page.locator("ol.items > li.item").nth(0).get_by_label("Label (required)").fill("Boil water")
    add_item.click()
    page.locator("ol.items > li.item").nth(1).get_by_label("Label (required)").fill("Find a cup")
    page.get_by_role("button", name="Move Steps item 2 up").click()
    expect(page.locator("#announcer")).to_contain_text("moved to position 1 of 2")
    # Alt+Arrow on the drag handle moves too, and the handle keeps the focus.
    first = page.locator("ol.items > li.item").nth(0).get_by_label("Label (required)")
    expect(first).to_have_value("Find a cup")
    page.get_by_role("button", name="Reorder Steps item 1: drag, or Alt+Up and Alt+Down").press(
        "Alt+ArrowDown"
    )
    expect(first).to_have_value("Boil water")
    page.keyboard.press("Alt+ArrowUp")
    expect(first).to_have_value("Find a cup")
    page.get_by_label("Accent", exact=True).fill("#1A73E8")
    page.get_by_label("Tone").select_option("calm")
    tab.check("entry-new")
    page.get_by_role("button", name="Create").click()
    page.wait_for_url(SAVED_ENTRY)
    expect(page.locator("#save-status")).to_contain_text("Created (revision 1)")
    entry_id = page.url.split("?")[0].rsplit("/", 1)[-1]

    page.get_by_role("button", name="Publish", exact=True).click()
    expect(page.locator("#entry-status")).to_contain_text("published")
    page.get_by_role("button", name="Unpublish").click()
    expect(page.locator("#entry-status")).to_contain_text("unpublished")
    page.get_by_role("button", name="Publish", exact=True).click()
    expect(page.locator("#entry-status")).to_have_text("Status: published")
    tab.check("entry-published")

    saved = cms.call("GET", f"/entries/{entry_id}")
    assert saved["status"] == "published"
    assert saved["data"]["body"] == "<p>Hello <strong>world</strong></p>"
    assert saved["data"]["author"] == site["people"]["Ada Lovelace"]
    assert [s["label"] for s in saved["data"]["steps"]] == ["Find a cup", "Boil water"]
    assert saved["data"]["accent"] == "#1a73e8"
    assert saved["data"]["tone"] == "calm"
    media = cms.call("GET", f"/media/{saved['data']['hero']}")
    assert (media["filename"], media["type"], media["width"]) == ("sunrise.png", "image/png", 40)

    # The list screen finds it by search, filter and sort.
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Entries").click()
    page.get_by_label("Search").fill("hello")
    page.get_by_label("Status").select_option("published")
    expect(page.get_by_role("link", name="Hello world")).to_be_visible()
    expect(page.get_by_role("link", name="Ada Lovelace")).to_have_count(0)
    tab.check("entries")


def test_a_refused_save_marks_its_input_and_saves_nothing(
    screens: Callable[[], Screens], gateway: GatewayProcess, site: dict[str, Any]
) -> None:
    cms: Cms = site["cms"]
    if "article" not in [t["name"] for t in cms.call("GET", "/types")["data"]]:
        cms.call(
            "POST", "/types",
            {"name": "article", "fields": [
                {"key": "summary", "type": "text", "label": "Summary", "required": True},
                {"key": "steps", "type": "list", "label": "Steps", "fields": [
                    {"key": "label", "type": "text", "label": "Label", "required": True},
                    {"key": "link", "type": "url", "label": "Link"},
                ]},
                {"key": "meta", "type": "json", "label": "Metadata"},
            ]},
            201,
        )  # fmt: skip
    entry = cms.call(
        "POST",
        "/entries",
        {"type": "article", "title": "Tea", "data": {"summary": "Hot", "steps": [{"label": "a"}]}},
        201,
    )
    tab = signed_in(screens, OWNER, f"/cms/admin/entries/{entry['id']}")
    page = tab.page
    expect(page.get_by_label("Summary (required)")).to_have_value("Hot")
    page.get_by_label("Summary (required)").fill("")
    page.locator("ol.items > li.item").nth(0).get_by_label("Link").fill("not a link")
    page.get_by_role("button", name="Save", exact=True).click()
    summary = page.get_by_label("Summary (required)")
    expect(summary).to_have_attribute("aria-invalid", "true")
    link = page.locator("ol.items > li.item").nth(0).get_by_label("Link")
    expect(link).to_have_attribute("aria-invalid", "true")
    alert = page.locator("form .alert")
    expect(alert).to_contain_text("Nothing was saved: 2 fields need attention.")
    expect(alert).to_contain_text("Steps item 1 › Link")
    expect(page.locator("#announcer")).to_contain_text("Nothing was saved")
    expect(summary).to_be_focused()
    tab.check("entry-refused")
    assert cms.call("GET", f"/entries/{entry['id']}")["revision"] == 1

    # JSON that does not parse is refused before anything is sent.
    summary.fill("Hot again")
    link.fill("https://example.com/tea")
    meta = page.get_by_role("textbox", name="Metadata")
    meta.click()
    page.keyboard.type('{"cups": ')
    expect(page.locator(".code-status")).to_contain_text("Not valid JSON")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(meta).to_have_attribute("aria-invalid", "true")
    assert cms.call("GET", f"/entries/{entry['id']}")["revision"] == 1
    page.keyboard.type("2}")
    expect(page.locator(".code-status")).to_have_text("Valid JSON.")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator("#save-status")).to_contain_text("Saved (revision 2)")
    saved = cms.call("GET", f"/entries/{entry['id']}")
    assert saved["data"]["meta"] == {"cups": 2}
    assert saved["data"]["steps"][0]["link"] == "https://example.com/tea"


def test_restore_a_revision_then_trash_and_restore_the_entry(
    screens: Callable[[], Screens], gateway: GatewayProcess, site: dict[str, Any]
) -> None:
    cms: Cms = site["cms"]
    entry = cms.call("POST", "/entries", {"type": "person", "title": "Katherine"}, 201)
    term = cms.call("POST", "/taxonomies/categories/terms", {"name": "Pioneers"}, 201)
    tab = signed_in(screens, OWNER, f"/cms/admin/entries/{entry['id']}")
    page = tab.page
    page.get_by_label("Title (required)").fill("Katherine Johnson")
    page.get_by_role("checkbox", name="Pioneers").check()
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator("#save-status")).to_contain_text("Saved (revision 2)")
    assert [t["id"] for t in cms.call("GET", f"/entries/{entry['id']}")["terms"]] == [term["id"]]
    page.get_by_role("button", name="Compare revision 1 with the saved entry").click()
    diff = page.get_by_role("region", name="Differences between revision 1 and the saved entry")
    expect(diff.locator("del")).to_contain_text('"title": "Katherine"')
    expect(diff.locator("ins")).to_contain_text('"title": "Katherine Johnson"')
    tab.check("entry-revisions")
    page.get_by_role("button", name="Restore revision 1").click()
    expect(page.locator("#save-status")).to_contain_text("Restored revision 1 as revision 3")
    expect(page.get_by_label("Title (required)")).to_have_value("Katherine")
    restored = cms.call("GET", f"/entries/{entry['id']}")
    assert (restored["title"], restored["revision"]) == ("Katherine", 3)

    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Move to the trash").click()
    page.wait_for_url("**/admin/trash")
    expect(page.get_by_role("status").first).to_contain_text("“Katherine” was moved to the trash.")
    tab.check("trash")
    page.get_by_role("button", name="Restore Katherine").click()
    expect(page.get_by_role("status").first).to_contain_text("restored as a draft")
    assert cms.call("GET", f"/entries/{entry['id']}")["status"] == "draft"
    page.get_by_role("link", name="Open it").click()
    expect(page.get_by_label("Title (required)")).to_have_value("Katherine")


def test_two_people_on_one_entry_see_each_other_and_each_others_saves(
    screens: Callable[[], Screens], gateway: GatewayProcess, site: dict[str, Any]
) -> None:
    cms: Cms = site["cms"]
    entry = cms.call("POST", "/entries", {"type": "person", "title": "Margaret"}, 201)
    path = f"/cms/admin/entries/{entry['id']}"
    olive = signed_in(screens, OWNER, path)
    eddie = signed_in(screens, EDITOR, path)
    expect(olive.page.get_by_role("list", name="Also editing this entry")).to_contain_text("Eddie")
    expect(eddie.page.get_by_role("list", name="Also editing this entry")).to_contain_text("Olive")
    olive.check("entry-presence")

    eddie.page.get_by_label("Title (required)").fill("Margaret Hamilton")
    eddie.page.get_by_role("button", name="Save", exact=True).click()
    expect(eddie.page.locator("#save-status")).to_contain_text("Saved (revision 2)")
    notice = olive.page.locator("#live-notice")
    expect(notice).to_contain_text("Eddie saved this entry (revision 2).")
    expect(eddie.page.locator("#live-notice")).to_be_hidden()
    olive.check("entry-saved-elsewhere")
    notice.get_by_role("button", name="Load their version").click()
    expect(olive.page.get_by_label("Title (required)")).to_have_value("Margaret Hamilton")

    # Eddie leaves: Olive is alone again.
    eddie.page.close()
    expect(olive.page.get_by_role("list", name="Also editing this entry")).not_to_contain_text(
        "Eddie"
    )


def test_a_gallery_by_drop_library_and_drag_then_a_schedule(
    screens: Callable[[], Screens], gateway: GatewayProcess, site: dict[str, Any]
) -> None:
    cms: Cms = site["cms"]
    cms.call(
        "POST",
        "/types",
        {
            "name": "album",
            "fields": [
                {"key": "photos", "type": "gallery", "label": "Photos"},
                {"key": "notes", "type": "markdown", "label": "Notes"},
            ],
        },
        201,
    )
    upload = cms.client.post(
        "/media",
        files={"file": ("library.png", image_bytes("navy"), "image/png")},
        data={"alt": "From the library"},
    )
    assert upload.status_code == 201, upload.text
    tab = signed_in(screens, OWNER, "/cms/admin/entries/new?type=album")
    page = tab.page
    page.get_by_label("Title (required)").fill("Holiday")
    photos = page.locator("fieldset", has=page.get_by_text("Photos", exact=True))
    # Two files dropped on the gallery are uploaded and added in order.
    transfer = page.evaluate_handle(
        """(files) => {
            const transfer = new DataTransfer();
            for (const [name, data] of files) {
                const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
                transfer.items.add(new File([bytes], name, { type: "image/png" }));
            }
            return transfer;
        }""",
        [
            ["beach.png", base64.b64encode(image_bytes("gold")).decode()],
            ["hill.png", base64.b64encode(image_bytes("green")).decode()],
        ],
    )
    photos.locator(".drop").dispatch_event("drop", {"dataTransfer": transfer})
    expect(photos.get_by_role("status")).to_have_text("Uploaded hill.png.")
    order = photos.locator("ul.items figcaption")
    expect(order).to_have_text(["beach.png", "hill.png"])
    photos.get_by_role("button", name="Add from the library").click()
    dialog = page.get_by_role("dialog", name="Add images")
    dialog.get_by_role("button", name="Choose library.png").click()
    tab.check("media-picker")
    dialog.get_by_role("button", name="Add the chosen images").click()
    expect(order).to_have_text(["beach.png", "hill.png", "library.png"])
    # Dragged by its handle to the front, then one step back by keyboard.
    handles = photos.locator("ul.items .handle")
    handles.nth(2).drag_to(handles.nth(0))
    expect(order).to_have_text(["library.png", "beach.png", "hill.png"])
    photos.get_by_role("button", name="Move library.png (image 1 of 3) down").click()
    expect(order).to_have_text(["beach.png", "library.png", "hill.png"])
    # Markdown is written in CodeMirror and previewed, stored as written.
    page.get_by_role("textbox", name="Notes").click()
    page.keyboard.type("A **sunny** week")
    page.get_by_role("button", name="Show preview").click()
    expect(page.get_by_role("region", name="Notes preview").locator("strong")).to_have_text("sunny")
    page.get_by_role("button", name="Edit", exact=True).click()
    page.get_by_role("button", name="Create").click()
    page.wait_for_url(SAVED_ENTRY)
    entry_id = page.url.split("?")[0].rsplit("/", 1)[-1]
    assert cms.call("GET", f"/entries/{entry_id}")["data"]["notes"] == "A **sunny** week"
    saved = cms.call("GET", f"/entries/{entry_id}")["data"]["photos"]
    names = [cms.call("GET", f"/media/{media_id}")["filename"] for media_id in saved]
    assert names == ["beach.png", "library.png", "hill.png"]

    # A time in the past is refused on its input; a future one schedules.
    schedule = page.get_by_label("Publish at")
    schedule.fill("2020-01-01T10:00")
    page.get_by_role("button", name="Schedule", exact=True).click()
    expect(schedule).to_have_attribute("aria-invalid", "true")
    assert cms.call("GET", f"/entries/{entry_id}")["publishAt"] is None
    schedule.fill("2099-06-01T10:00")
    page.get_by_role("button", name="Schedule", exact=True).click()
    expect(page.locator("#entry-status")).to_contain_text("scheduled for")
    assert cms.call("GET", f"/entries/{entry_id}")["publishAt"].startswith("2099-06-01")
    tab.check("entry-scheduled")
    page.get_by_role("button", name="Cancel the schedule").click()
    expect(page.locator("#entry-status")).not_to_contain_text("scheduled")
    assert cms.call("GET", f"/entries/{entry_id}")["publishAt"] is None
