"""The assistant's tools called directly: the spec's 45, what each role is offered,
each read equal to its admin route, and arguments refused before any proposal."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from content.assistant.tools import TOOLBOX
from content.auth.permissions import role_permissions
from tests.content.assistant.conftest import World
from tests.content.conftest import ROLES

# The spec's "Assistant tools" table, as written there.
SPEC = {
    "list_content_types": ("read", "content.read"),
    "list_entries": ("read", "content.read"),
    "search_site": ("read", "content.read"),
    "get_entry": ("read", "content.read"),
    "get_page_layout": ("read", "content.read"),
    "list_revisions": ("read", "content.read"),
    "list_trash": ("read", "content.write"),
    "list_media": ("read", "content.read"),
    "list_taxonomies": ("read", "content.read"),
    "get_site_settings": ("read", "content.read"),
    "get_design": ("read", "settings.manage"),
    "list_menus": ("read", "content.read"),
    "list_plugins": ("read", "plugins.manage"),
    "list_people": ("read", "users.manage"),
    "list_delivery_keys": ("read", "keys.manage"),
    "list_webhooks": ("read", "webhooks.manage"),
    "get_social_setup": ("read", "social.manage"),
    "get_social_guide": ("read", "social.manage"),
    "list_social_posts": ("read", "social.write"),
    "propose_entry_update": ("propose", "content.write"),
    "propose_revision_restore": ("propose", "content.write"),
    "propose_entry_untrash": ("propose", "content.write"),
    "propose_entry_create": ("propose", "content.write"),
    "propose_entry_status": ("propose", "content.write"),
    "propose_entry_delete": ("propose", "content.write"),
    "propose_entry_terms": ("propose", "content.write"),
    "propose_type_update": ("propose", "types.manage"),
    "propose_type_create": ("propose", "types.manage"),
    "propose_media_update": ("propose", "media.manage"),
    "propose_taxonomy_create": ("propose", "taxonomy.manage"),
    "propose_term_create": ("propose", "taxonomy.manage"),
    "propose_settings_update": ("propose", "settings.manage"),
    "propose_design_change": ("propose", "settings.manage"),
    "propose_menu_update": ("propose", "menus.manage"),
    "propose_menu_create": ("propose", "menus.manage"),
    "propose_menu_delete": ("propose", "menus.manage"),
    "propose_plugin_state": ("propose", "plugins.manage"),
    "propose_plugin_settings": ("propose", "plugins.manage"),
    "propose_person_role": ("propose", "users.manage"),
    "propose_delivery_key": ("propose", "keys.manage"),
    "propose_webhook_create": ("propose", "webhooks.manage"),
    "propose_webhook_update": ("propose", "webhooks.manage"),
    "propose_social_app": ("propose", "social.manage"),
    "propose_social_post": ("propose", "social.write"),
    "open_screen": ("move", "content.read"),
}


def test_exactly_the_spec_s_45_tools_with_their_kinds_and_permissions() -> None:
    got = {name: (t.kind, t.permission) for name, t in TOOLBOX.tools.items()}
    assert got == SPEC
    assert len(got) == 45
    kinds = [kind for kind, _ in got.values()]
    assert (kinds.count("read"), kinds.count("propose"), kinds.count("move")) == (19, 25, 1)


def _refuses_unknown_members(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "object" and schema.get("additionalProperties") is False


def test_every_tool_s_parameters_are_a_closed_json_schema_object() -> None:
    for tool in TOOLBOX.tools.values():
        assert _refuses_unknown_members(tool.parameters), tool.name
        assert tool.description


@pytest.mark.parametrize("role", ROLES)
async def test_each_role_is_offered_only_what_it_could_apply(world: World, role: str) -> None:
    principal = await world.principal(world.team[role])
    held = role_permissions(role)
    for visual in (True, False):
        names = {s.name for s in TOOLBOX.specs(world.ctx, principal, visual_connected=visual)}
        expected = {n for n, (_, permission) in SPEC.items() if permission in held}
        if not visual:
            expected.discard("get_page_layout")
        assert names == expected
    # What the spec's table implies, spelled out for the roles people know.
    offered = {s.name for s in TOOLBOX.specs(world.ctx, principal, visual_connected=True)}
    if role == "viewer":
        assert not any(n.startswith("propose_") for n in offered)
        assert "list_trash" not in offered
    if role == "author":
        assert "propose_entry_update" in offered and "propose_type_create" not in offered
        assert "propose_social_post" in offered and "propose_menu_update" not in offered
    if role == "editor":
        assert "propose_menu_delete" in offered and "get_design" not in offered
        assert "propose_person_role" not in offered and "list_people" not in offered


async def test_a_tool_not_offered_is_refused_when_called_anyway(world: World) -> None:
    out = await world.call(world.team["author"], "propose_type_create", {"name": "x"})
    assert out.error and "no tool named" in out.error and out.proposal is None


async def _setup_reads(world: World) -> None:
    owner = world.team["owner"]
    await world.send(
        "PATCH", f"/api/entries/{world.about}", owner, json={"data": {"body": "Hello again"}}
    )
    trashed = await world.send(
        "POST", "/api/entries", owner, json={"type": "page", "title": "Old news"}
    )
    await world.send("DELETE", f"/api/entries/{trashed['id']}", owner)
    await world.send(
        "POST", "/api/menus", owner, json={"name": "main", "items": [{"label": "Home", "url": "/"}]}
    )
    await world.send("POST", "/api/taxonomies/tags/terms", owner, json={"name": "News"})
    await world.send("POST", "/api/delivery-keys", owner, json={"name": "site", "types": ["*"]})
    await world.send(
        "POST", "/api/webhooks", owner, json={"name": "hook", "url": "http://127.0.0.1:9/h"}
    )
    await world.send("PATCH", f"/api/media/{world.media}", owner, json={"alt": "About the team"})
    await world.send("PATCH", "/api/design/header", owner, json={"background": "#000000"})
    await world.send("POST", "/api/social/posts", owner, json={"text": "Hello"})


def _narrowed(fields: list[str]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def project(page: dict[str, Any]) -> dict[str, Any]:
        data = [{**e, "data": {k: e["data"][k] for k in fields}} for e in page["data"]]
        return {"data": data, "meta": {**_offset(page["meta"])}}

    return project


def _offset(meta: dict[str, Any]) -> dict[str, Any]:
    return {"total": meta["total"], "offset": 0, "limit": meta["limit"]}


def _page(page: dict[str, Any]) -> dict[str, Any]:
    return {"data": page["data"], "meta": _offset(page["meta"])}


def _same(body: Any) -> Any:
    return body


# tool -> (arguments, admin route(s), what the tool answers in terms of the route's JSON)
READS: dict[str, tuple[dict[str, Any], list[str], Callable[..., Any]]] = {
    "list_content_types": ({}, ["/api/types"], _same),
    "list_entries": ({"fields": ["heading"]}, ["/api/entries"], _narrowed(["heading"])),
    "search_site": (
        {"query": "About"},
        ["/api/entries?search=About&limit=10", "/api/media?search=About&limit=10"],
        lambda pages, files: {"pages": _page(pages), "files": files},
    ),
    "get_entry": ({"entryId": "{about}"}, ["/api/entries/{about}"], _same),
    "get_page_layout": (
        {"entryId": "{about}"},
        ["/api/entries/{about}"],
        lambda entry: {
            "order": entry["data"].get("__layout", {}).get("order") or ["hero", "story", "contact"],
            "hidden": entry["data"].get("__layout", {}).get("hidden", []),
        },
    ),
    "list_revisions": ({"entryId": "{about}"}, ["/api/entries/{about}/revisions"], _page),
    "list_trash": ({}, ["/api/trash"], _narrowed([])),
    "list_media": ({}, ["/api/media"], _same),
    "list_taxonomies": ({}, ["/api/taxonomies"], _same),  # with each one's terms: below
    "get_site_settings": ({}, ["/api/settings"], _same),
    "get_design": ({}, ["/api/design"], _same),
    "list_menus": ({}, ["/api/menus"], _same),
    "list_plugins": ({}, ["/api/plugins"], _same),
    "list_people": ({}, ["/api/users"], _page),
    "list_delivery_keys": ({}, ["/api/delivery-keys"], _same),
    "list_webhooks": ({}, ["/api/webhooks"], _same),
    "get_social_setup": ({}, ["/api/social/accounts"], _same),
    "get_social_guide": ({}, ["/api/social/settings"], _same),
    "list_social_posts": ({}, ["/api/social/posts"], _page),
}


def test_the_read_table_covers_every_read_tool() -> None:
    assert set(READS) == {n for n, (kind, _) in SPEC.items() if kind == "read"}


@pytest.mark.parametrize("role", ["owner", "editor", "author"])
async def test_each_read_answers_what_its_admin_route_answers(world: World, role: str) -> None:
    await _setup_reads(world)
    owner = world.team[role]
    ids = {"about": world.about}
    held = role_permissions(role)
    for name, (arguments, paths, project) in READS.items():
        if SPEC[name][1] not in held:
            continue
        args = {k: v.format(**ids) if isinstance(v, str) else v for k, v in arguments.items()}
        out = await world.call(owner, name, args)
        assert out.error is None, (name, out.error)
        routes = [await world.get(p.format(**ids), owner) for p in paths]
        if name == "list_taxonomies":
            expected = {
                "data": [
                    {
                        **t,
                        "terms": (await world.get(f"/api/taxonomies/{t['slug']}/terms", owner))[
                            "data"
                        ],
                    }
                    for t in routes[0]["data"]
                ]
            }
            assert out.content == expected
            assert any(t["terms"] for t in out.content["data"])
            continue
        if name == "get_page_layout":
            got = {"order": out.content["order"], "hidden": out.content["hidden"]}
            assert got == project(*routes)
            assert [s["id"] for s in out.content["sections"]] == ["hero", "story", "contact"]
            continue
        assert out.content == project(*routes), name
        # Reads that list something found it (the comparison is not of two empties).
        if name.startswith("list_") and name != "list_social_posts":
            assert out.content["data"], name


async def test_page_layout_reflects_a_saved_layout_and_is_only_for_visual_types(
    world: World,
) -> None:
    editor = world.team["editor"]
    layout = {"order": ["story", "hero", "contact"], "hidden": ["contact"]}
    await world.send(
        "PATCH", f"/api/entries/{world.about}", editor, json={"data": {"__layout": layout}}
    )
    out = await world.call(editor, "get_page_layout", {"entryId": world.about})
    assert out.content["order"] == layout["order"] and out.content["hidden"] == ["contact"]
    assert [s["hidden"] for s in out.content["sections"]] == [False, False, True]
    await world.send("POST", "/api/types", world.team["owner"], json={"name": "note"})
    note = await world.send("POST", "/api/entries", editor, json={"type": "note", "title": "N"})
    refused = await world.call(editor, "get_page_layout", {"entryId": note["id"]})
    assert refused.error and "no visual page definition" in refused.error


async def test_list_entries_pages_by_offset_with_up_to_eight_fields(world: World) -> None:
    editor = world.team["editor"]
    first = await world.call(editor, "list_entries", {"limit": 1, "fields": ["body"]})
    second = await world.call(editor, "list_entries", {"limit": 1, "offset": 1})
    route = await world.get("/api/entries")
    assert [e["id"] for e in first.content["data"] + second.content["data"]] == [
        e["id"] for e in route["data"]
    ]
    assert first.content["data"][0]["data"] == {"body": route["data"][0]["data"]["body"]}
    assert second.content["meta"] == {"total": 2, "offset": 1, "limit": 1}
    nine = await world.call(editor, "list_entries", {"fields": [f"f{i}" for i in range(9)]})
    assert nine.error and "fields" in nine.error


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        # Unknown fields, of the tool and of the entry's data.
        ("propose_entry_update", {"entryId": "{about}", "colour": "red"}, "colour"),
        ("propose_entry_update", {"entryId": "{about}", "data": {"subtitle": "x"}}, "subtitle"),
        # Invalid values, by the schema and by the type's own field rules.
        ("propose_entry_update", {"entryId": "{about}", "slug": "Not A Slug"}, "slug"),
        ("propose_entry_update", {"entryId": "{about}", "data": {"rating": 9}}, "rating"),
        # Unknown section ids in data.__layout.
        (
            "propose_entry_update",
            {"entryId": "{about}", "data": {"__layout": {"order": ["hero", "footer"]}}},
            "footer",
        ),
        ("propose_entry_update", {"entryId": "nope", "title": "x"}, "no such entry"),
        ("propose_entry_update", {"entryId": "{about}", "title": "About us"}, "change nothing"),
        ("propose_entry_create", {"type": "nope", "title": "x"}, "no content type"),
        ("propose_entry_terms", {"entryId": "{about}", "terms": ["nope"]}, "terms.0"),
        ("propose_revision_restore", {"entryId": "{about}", "number": 99}, "no such revision"),
        ("propose_type_create", {"name": "page"}, "exists"),
        ("propose_type_create", {"name": "x", "fields": [{"key": "a", "type": "nope"}]}, "type"),
        ("propose_media_update", {"mediaId": "{media}", "alt": "x" * 1001}, "alt"),
        ("propose_term_create", {"taxonomy": "nope", "name": "x"}, "no taxonomy"),
        ("propose_settings_update", {"logo": "nope"}, "logo"),
        ("propose_design_change", {"surface": "header", "values": {"margin": "1px"}}, "margin"),
        (
            "propose_design_change",
            {"surface": "header", "values": {"background": "blue!"}},
            "background",
        ),
        ("propose_design_change", {"surface": "footer", "values": {}}, "footer"),
        ("propose_menu_update", {"name": "nope", "items": []}, "no menu"),
        ("propose_menu_create", {"name": "m", "items": [{"label": "x"}]}, "url or entryId"),
        ("propose_plugin_settings", {"name": "gallery", "settings": {"theme": "x"}}, "theme"),
        ("propose_plugin_settings", {"name": "gallery", "settings": {"columns": 9}}, "columns"),
        ("propose_plugin_state", {"name": "nope", "enabled": True}, "no plugin"),
        ("propose_person_role", {"userId": "{editor}", "role": "emperor"}, "role"),
        ("propose_delivery_key", {"name": "k", "types": ["nope"]}, "nope"),
        ("propose_webhook_create", {"name": "h", "url": "ftp://x"}, "url"),
        ("propose_webhook_update", {"webhookId": "nope", "name": "x"}, "no webhook"),
        ("propose_social_app", {"network": "myspace", "clientId": "x"}, "network"),
        ("propose_social_app", {"network": "x", "clientSecret": "s3cret"}, "clientSecret"),
        ("propose_social_post", {"text": "x", "at": "2000-01-01T00:00:00Z"}, "future"),
        ("propose_social_post", {"text": "x", "media": ["nope"]}, "media.0"),
        ("open_screen", {"screen": "bridge"}, "screen"),
        ("open_screen", {"screen": "entry"}, "needs the id"),
    ],
)
async def test_bad_arguments_are_refused_with_a_message_the_model_can_act_on(
    world: World, tool: str, arguments: dict[str, Any], says: str
) -> None:
    ids = {"about": world.about, "media": world.media, "editor": world.team["editor"].id}
    args = {k: v.format(**ids) if isinstance(v, str) else v for k, v in arguments.items()}
    out = await world.call(world.team["owner"], tool, args)
    assert out.error is not None and says in out.error, out.error
    assert out.proposal is None and out.content == {"error": out.error}
    listed = await world.get("/api/assistant/proposals")
    assert listed["data"] == []


async def test_rank_publish_and_schedule_rules_refuse_before_review(world: World) -> None:
    admin, author = world.team["admin"], world.team["author"]
    # Never above the actor's own rank.
    up = await world.call(admin, "propose_person_role", {"userId": author.id, "role": "owner"})
    assert up.error and "above your own rank" in up.error
    over = await world.call(
        admin, "propose_person_role", {"userId": world.team["owner"].id, "role": "viewer"}
    )
    assert over.error and "above your own rank" in over.error
    # Going live needs content.publish.
    mine = await world.send("POST", "/api/entries", author, json={"type": "page", "title": "Mine"})
    live = await world.call(
        author, "propose_entry_status", {"entryId": mine["id"], "status": "published"}
    )
    assert live.error and "content.publish" in live.error
    # Scheduling a social post needs social.publish; the same post unscheduled is fine.
    at = "2099-01-01T09:00:00Z"
    scheduled = await world.call(author, "propose_social_post", {"text": "Hi", "at": at})
    assert scheduled.error and "social.publish" in scheduled.error
    plain = await world.call(author, "propose_social_post", {"text": "Hi"})
    assert plain.error is None and plain.proposal is not None
    # An author's proposals touch only their own drafts, as the edit route does.
    other = await world.call(author, "propose_entry_update", {"entryId": world.draft, "title": "x"})
    assert other.error and "own" in other.error


async def test_menu_delete_is_marked_not_recoverable_in_its_diff(world: World) -> None:
    editor = world.team["editor"]
    await world.send("POST", "/api/menus", editor, json={"name": "footer", "items": []})
    out = await world.call(editor, "propose_menu_delete", {"name": "footer"})
    assert out.proposal is not None
    assert out.proposal["recoverable"] is False
    assert out.proposal["diff"][0]["field"] == "menu" and out.proposal["diff"][0]["after"] is None
    trash = await world.call(editor, "propose_entry_delete", {"entryId": world.draft})
    assert trash.proposal is not None and trash.proposal["recoverable"] is True


async def test_open_screen_moves_the_admin_and_writes_nothing(world: World) -> None:
    editor = world.team["editor"]
    out = await world.call(editor, "open_screen", {"screen": "entry", "id": world.about})
    assert out.screen == {"path": f"/admin/entries/{world.about}"}
    assert out.proposal is None and out.error is None
    people = await world.call(editor, "open_screen", {"screen": "people"})
    assert people.error and "cannot open" in people.error
    listed = await world.get("/api/assistant/proposals", editor)
    assert listed["data"] == []


async def test_without_visual_pages_get_page_layout_is_neither_offered_nor_run(
    start: Any, team: dict[str, Any]
) -> None:
    from content.context import CONTEXT

    _, client = await start()
    ctx = client.server.app[CONTEXT]
    world = World(client, ctx, team, "", "", "")
    principal = await world.principal(team["editor"])
    names = {s.name for s in TOOLBOX.specs(ctx, principal, visual_connected=False)}
    assert "get_page_layout" not in names and "get_entry" in names
    out = await world.call(team["editor"], "get_page_layout", {"entryId": "x"})
    assert out.error and "no tool named" in out.error


async def test_the_diff_names_only_the_fields_a_proposal_changes(world: World) -> None:
    out = await world.call(
        world.team["editor"],
        "propose_entry_update",
        {"entryId": world.about, "data": {"body": "New body", "rating": 4}},
    )
    assert out.proposal is not None
    assert out.proposal["diff"] == [
        {"field": "data.body", "before": "Hello", "after": "New body"},
        {"field": "data.rating", "before": None, "after": 4},
    ]
    assert out.proposal["target"] == {"kind": "entry", "id": world.about}
    entry = await world.get(f"/api/entries/{world.about}")
    assert out.proposal["targetUpdatedAt"] == entry["updatedAt"]


async def test_a_second_entry_of_a_single_kind_type_is_refused_before_review(world: World) -> None:
    owner = world.team["owner"]
    await world.send("POST", "/api/types", owner, json={"name": "home", "single": True})
    await world.send("POST", "/api/entries", owner, json={"type": "home", "title": "Home"})
    out = await world.call(owner, "propose_entry_create", {"type": "home", "title": "Again"})
    assert out.error and "single-kind" in out.error
