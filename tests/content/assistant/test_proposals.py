"""Proposals: each of the 25 applied through its route as the person and recorded
in Activity as their change; stale, demoted, twice, someone else's; secrets once."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from tests.content.assistant.conftest import World
from tests.content.factories import make_agent_key
from tests.content.test_social import connect_bsky

Arguments = Callable[[World], Awaitable[dict[str, Any]]]
Check = Callable[[World, dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class Case:
    role: str
    arguments: Arguments
    action: str  # the activity action the manual route records
    check: Check
    body: dict[str, Any] | None = None


async def _entry(world: World, entry_id: str) -> dict[str, Any]:
    return await world.get(f"/api/entries/{entry_id}")  # type: ignore[no-any-return]


def _fixed(args: dict[str, Any]) -> Arguments:
    async def make(world: World) -> dict[str, Any]:
        return {
            k: v.format(about=world.about, draft=world.draft, media=world.media)
            if isinstance(v, str)
            else v
            for k, v in args.items()
        }

    return make


async def _update_args(world: World) -> dict[str, Any]:
    return {
        "entryId": world.about,
        "title": "About the team",
        "data": {"body": "We make things", "__layout": {"order": ["story", "hero"], "hidden": []}},
    }


async def _check_update(world: World, answer: dict[str, Any]) -> None:
    entry = await _entry(world, world.about)
    assert entry["title"] == "About the team" and entry["data"]["body"] == "We make things"
    assert entry["data"]["__layout"]["order"] == ["story", "hero"]
    revisions = await world.get(f"/api/entries/{world.about}/revisions")
    assert revisions["data"][0]["actor"]["userId"] == world.team["editor"].id


async def _restore_args(world: World) -> dict[str, Any]:
    await world.send(
        "PATCH", f"/api/entries/{world.about}", world.team["editor"], json={"title": "Renamed"}
    )
    return {"entryId": world.about, "number": 1}


async def _check_restore(world: World, answer: dict[str, Any]) -> None:
    assert (await _entry(world, world.about))["title"] == "About us"
    revisions = await world.get(f"/api/entries/{world.about}/revisions")
    assert revisions["data"][0]["note"] == "restored from revision 1"


async def _untrash_args(world: World) -> dict[str, Any]:
    await world.send("DELETE", f"/api/entries/{world.draft}", world.team["editor"])
    return {"entryId": world.draft}


async def _check_untrash(world: World, answer: dict[str, Any]) -> None:
    assert (await _entry(world, world.draft))["deletedAt"] is None


async def _check_create(world: World, answer: dict[str, Any]) -> None:
    created = await _entry(world, answer["result"]["id"])
    assert created["title"] == "Contact" and created["status"] == "draft"
    assert created["data"]["heading"] == "Write to us"
    assert answer["proposal"]["resultId"] == created["id"]


async def _check_status(world: World, answer: dict[str, Any]) -> None:
    assert (await _entry(world, world.draft))["status"] == "published"


async def _check_delete(world: World, answer: dict[str, Any]) -> None:
    trash = await world.get("/api/trash")
    assert [e["id"] for e in trash["data"]] == [world.draft]


async def _terms_args(world: World) -> dict[str, Any]:
    term = await world.send("POST", "/api/taxonomies/tags/terms", json={"name": "Team"})
    return {"entryId": world.about, "terms": [term["id"]]}


async def _check_terms(world: World, answer: dict[str, Any]) -> None:
    assert [t["slug"] for t in (await _entry(world, world.about))["terms"]] == ["team"]


async def _check_type_update(world: World, answer: dict[str, Any]) -> None:
    page = await world.get("/api/types/page")
    assert page["label"] == "Web page" and page["fields"][-1]["key"] == "summary"


async def _check_type_create(world: World, answer: dict[str, Any]) -> None:
    assert (await world.get("/api/types/event"))["fields"][0]["key"] == "startsAt"


async def _check_media(world: World, answer: dict[str, Any]) -> None:
    media = await world.get(f"/api/media/{world.media}")
    assert (media["alt"], media["folder"]) == ("Our office", "team")


async def _check_taxonomy(world: World, answer: dict[str, Any]) -> None:
    assert (await world.get("/api/taxonomies/topics"))["hierarchical"] is True


async def _check_term(world: World, answer: dict[str, Any]) -> None:
    terms = (await world.get("/api/taxonomies/categories/terms"))["data"]
    assert [t["name"] for t in terms] == ["Guides"]


async def _check_settings(world: World, answer: dict[str, Any]) -> None:
    settings = await world.get("/api/settings")
    assert (settings["title"], settings["logo"]) == ("Acme", world.media)


async def _check_design(world: World, answer: dict[str, Any]) -> None:
    header = (await world.get("/api/design"))["data"][0]
    values = {p["key"]: p["value"] for p in header["properties"]}
    assert values["background"] == "#112233"


async def _menu(world: World) -> dict[str, Any]:
    await world.send("POST", "/api/menus", json={"name": "main", "items": []})
    return {"name": "main", "items": [{"label": "About", "entryId": world.about}]}


async def _check_menu_update(world: World, answer: dict[str, Any]) -> None:
    assert (await world.get("/api/menus/main"))["items"][0]["entryId"] == world.about


async def _check_menu_create(world: World, answer: dict[str, Any]) -> None:
    assert (await world.get("/api/menus/footer"))["label"] == "Footer"


async def _menu_delete_args(world: World) -> dict[str, Any]:
    await _menu(world)
    return {"name": "main"}


async def _check_menu_delete(world: World, answer: dict[str, Any]) -> None:
    resp = await world.client.get("/api/menus/main", headers=world.team["owner"].headers)
    assert resp.status == 404


async def _check_plugin_state(world: World, answer: dict[str, Any]) -> None:
    assert (await world.get("/api/plugins/gallery"))["status"] == "inactive"


async def _check_plugin_settings(world: World, answer: dict[str, Any]) -> None:
    assert (await world.get("/api/plugins/gallery"))["settings"]["columns"] == 4


async def _role_args(world: World) -> dict[str, Any]:
    return {"userId": world.team["author"].id, "role": "editor"}


async def _check_role(world: World, answer: dict[str, Any]) -> None:
    assert (await world.get(f"/api/users/{world.team['author'].id}"))["role"] == "editor"


async def _check_key(world: World, answer: dict[str, Any]) -> None:
    key = answer["secret"]["key"]
    assert key.startswith("svc_")
    resp = await world.client.get("/content", headers={"X-Api-Key": key})
    assert resp.status == 200
    assert key not in str(answer["proposal"])


async def _check_webhook_create(world: World, answer: dict[str, Any]) -> None:
    secret = answer["secret"]["secret"]
    assert secret and secret not in str(answer["proposal"]) and secret not in str(answer["result"])
    assert [w["name"] for w in (await world.get("/api/webhooks"))["data"]] == ["Deploys"]


async def _webhook_update_args(world: World) -> dict[str, Any]:
    hook = await world.send(
        "POST", "/api/webhooks", json={"name": "hook", "url": "http://127.0.0.1:9/h"}
    )
    return {"webhookId": hook["id"], "enabled": False, "events": ["entry.published"]}


async def _check_webhook_update(world: World, answer: dict[str, Any]) -> None:
    hook = (await world.get("/api/webhooks"))["data"][0]
    assert (hook["enabled"], hook["events"]) == (False, ["entry.published"])


async def _check_social_app(world: World, answer: dict[str, Any]) -> None:
    x = next(n for n in (await world.get("/api/social/settings"))["data"] if n["network"] == "x")
    # The secret came from the person's apply body, never from the proposal.
    assert (x["clientId"], x["secret"]) == ("x-client", "…ret!")
    assert "s3cret!" not in str(answer["proposal"])


async def _check_social_post(world: World, answer: dict[str, Any]) -> None:
    posts = (await world.get("/api/social/posts"))["data"]
    assert [p["text"] for p in posts] == ["We launched"]


CASES: dict[str, Case] = {
    "propose_entry_update": Case("editor", _update_args, "entry.updated", _check_update),
    "propose_revision_restore": Case("editor", _restore_args, "entry.updated", _check_restore),
    "propose_entry_untrash": Case("editor", _untrash_args, "entry.restored", _check_untrash),
    "propose_entry_create": Case(
        "author",
        _fixed({"type": "page", "title": "Contact", "data": {"heading": "Write to us"}}),
        "entry.created",
        _check_create,
    ),
    "propose_entry_status": Case(
        "editor",
        _fixed({"entryId": "{draft}", "status": "published"}),
        "entry.published",
        _check_status,
    ),
    "propose_entry_delete": Case(
        "editor", _fixed({"entryId": "{draft}"}), "entry.deleted", _check_delete
    ),
    "propose_entry_terms": Case("editor", _terms_args, "entry.updated", _check_terms),
    "propose_type_update": Case(
        "admin",
        _fixed(
            {
                "name": "page",
                "label": "Web page",
                "fields": [
                    {"key": "heading", "type": "text"},
                    {"key": "body", "type": "textarea"},
                    {"key": "rating", "type": "number", "min": 0, "max": 5},
                    {"key": "summary", "type": "text"},
                ],
            }
        ),
        "type.updated",
        _check_type_update,
    ),
    "propose_type_create": Case(
        "admin",
        _fixed({"name": "event", "fields": [{"key": "startsAt", "type": "datetime"}]}),
        "type.created",
        _check_type_create,
    ),
    "propose_media_update": Case(
        "author",
        _fixed({"mediaId": "{media}", "alt": "Our office", "folder": "team"}),
        "media.updated",
        _check_media,
    ),
    "propose_taxonomy_create": Case(
        "editor",
        _fixed({"name": "Topics", "hierarchical": True}),
        "taxonomy.created",
        _check_taxonomy,
    ),
    "propose_term_create": Case(
        "editor", _fixed({"taxonomy": "categories", "name": "Guides"}), "term.created", _check_term
    ),
    "propose_settings_update": Case(
        "admin", _fixed({"title": "Acme", "logo": "{media}"}), "settings.updated", _check_settings
    ),
    "propose_design_change": Case(
        "admin",
        _fixed({"surface": "header", "values": {"background": "#112233"}}),
        "design.updated",
        _check_design,
    ),
    "propose_menu_update": Case("editor", _menu, "menu.updated", _check_menu_update),
    "propose_menu_create": Case(
        "editor",
        _fixed({"name": "footer", "label": "Footer", "items": [{"label": "Home", "url": "/"}]}),
        "menu.created",
        _check_menu_create,
    ),
    "propose_menu_delete": Case("editor", _menu_delete_args, "menu.deleted", _check_menu_delete),
    "propose_plugin_state": Case(
        "admin",
        _fixed({"name": "gallery", "enabled": False}),
        "plugin.disabled",
        _check_plugin_state,
    ),
    "propose_plugin_settings": Case(
        "admin",
        _fixed({"name": "gallery", "settings": {"columns": 4}}),
        "plugin.updated",
        _check_plugin_settings,
    ),
    "propose_person_role": Case("admin", _role_args, "user.updated", _check_role),
    "propose_delivery_key": Case(
        "admin", _fixed({"name": "Website", "types": ["page"]}), "delivery_key.created", _check_key
    ),
    "propose_webhook_create": Case(
        "admin",
        _fixed({"name": "Deploys", "url": "http://127.0.0.1:9/deploy"}),
        "webhook.created",
        _check_webhook_create,
    ),
    "propose_webhook_update": Case(
        "admin", _webhook_update_args, "webhook.updated", _check_webhook_update
    ),
    "propose_social_app": Case(
        "admin",
        _fixed({"network": "x", "clientId": "x-client"}),
        "social.app.updated",
        _check_social_app,
        body={"clientSecret": "s3cret!"},
    ),
    "propose_social_post": Case(
        "author", _fixed({"text": "We launched"}), "social.post.created", _check_social_post
    ),
}


def test_every_propose_tool_has_a_case() -> None:
    from content.assistant.tools import TOOLBOX

    assert set(CASES) == {n for n, t in TOOLBOX.tools.items() if t.kind == "propose"}


@pytest.mark.parametrize("tool", sorted(CASES))
async def test_each_proposal_applies_through_its_route_as_the_person(
    world: World, tool: str
) -> None:
    case = CASES[tool]
    person = world.team[case.role]
    arguments = await case.arguments(world)
    out = await world.call(person, tool, arguments, conversation="conv-1")
    assert out.error is None, out.error
    assert out.proposal is not None and out.proposal["status"] == "pending"
    assert out.proposal["diff"] and all(
        {"field", "before", "after"} <= set(d) for d in out.proposal["diff"]
    )
    assert out.content["proposal"] == out.proposal["id"]
    # Nothing changed yet: the Activity log has nothing from this person.
    before = await world.get(f"/api/activity?userId={person.id}")
    resp = await world.apply(person, out.proposal["id"], **(case.body or {}))
    assert resp.status == 200, await resp.text()
    answer = await resp.json()
    assert answer["proposal"]["status"] == "applied"
    await case.check(world, answer)
    activity = await world.get(f"/api/activity?userId={person.id}")
    assert activity["meta"]["total"] > before["meta"]["total"]
    latest = activity["data"][0]
    assert latest["action"] == case.action
    assert latest["actor"] == {
        "kind": "user",
        "userId": person.id,
        "keyId": None,
        "name": latest["actor"]["name"],
    }
    # Once only.
    again = await world.apply(person, out.proposal["id"], **(case.body or {}))
    assert again.status == 409 and (await again.json())["code"] == "PROPOSAL_DECIDED"
    shown = await world.get(f"/api/assistant/proposals/{out.proposal['id']}", person)
    assert shown["status"] == "applied" and "secret" not in shown


async def test_a_scheduled_social_post_needs_an_editor_and_is_scheduled_on_apply(
    world: World, bsky: Any
) -> None:
    owner, editor = world.team["owner"], world.team["editor"]
    await connect_bsky(world.client, owner, bsky)
    out = await world.call(
        editor, "propose_social_post", {"text": "Soon", "at": "2099-01-01T09:00:00Z"}
    )
    assert out.proposal is not None and "social.publish" in out.proposal["needs"]
    resp = await world.apply(editor, out.proposal["id"])
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["result"]["status"] == "scheduled"
    activity = await world.get(f"/api/activity?userId={editor.id}")
    assert [a["action"] for a in activity["data"][:2]] == [
        "social.post.scheduled",
        "social.post.created",
    ]


async def test_a_proposal_whose_target_changed_is_refused_and_changes_nothing(
    world: World,
) -> None:
    editor = world.team["editor"]
    out = await world.call(editor, "propose_entry_update", {"entryId": world.about, "title": "New"})
    assert out.proposal is not None
    await world.send(
        "PATCH", f"/api/entries/{world.about}", world.team["owner"], json={"data": {"body": "x"}}
    )
    resp = await world.apply(editor, out.proposal["id"])
    assert resp.status == 409
    assert (await resp.json())["code"] == "PROPOSAL_STALE"
    assert (await _entry(world, world.about))["title"] == "About us"
    shown = await world.get(f"/api/assistant/proposals/{out.proposal['id']}", editor)
    assert shown["status"] == "refused" and "changed since" in shown["refusal"]
    activity = await world.get(f"/api/activity?userId={editor.id}")
    assert all(
        a["subject"]["id"] != world.about or a["action"] == "entry.created"
        for a in activity["data"]
    )


async def test_a_demoted_person_s_proposal_is_refused_and_changes_nothing(
    world: World, runtime: Any
) -> None:
    editor = world.team["editor"]
    out = await world.call(
        editor, "propose_entry_status", {"entryId": world.draft, "status": "published"}
    )
    menu = await world.call(editor, "propose_menu_create", {"name": "side", "items": []})
    assert out.proposal is not None and menu.proposal is not None
    await world.send("PATCH", f"/api/users/{editor.id}", json={"role": "author"})
    resp = await world.apply(editor, out.proposal["id"])
    assert resp.status == 403
    body = await resp.json()
    assert body["code"] == "PROPOSAL_NOT_PERMITTED" and body["details"]["permissions"] == [
        "content.publish"
    ]
    assert (await _entry(world, world.draft))["status"] == "draft"
    refused = await world.client.post(
        f"/api/assistant/proposals/{menu.proposal['id']}/apply", headers=editor.headers
    )
    assert refused.status == 403
    missing = await world.client.get("/api/menus/side", headers=editor.headers)
    assert missing.status == 404
    listed = await world.get("/api/assistant/proposals?status=refused", editor)
    assert {p["id"] for p in listed["data"]} == {out.proposal["id"], menu.proposal["id"]}


async def test_proposals_are_the_person_s_own_listed_by_conversation_and_status(
    world: World,
) -> None:
    editor, author = world.team["editor"], world.team["author"]
    first = await world.call(editor, "propose_entry_delete", {"entryId": world.draft}, "a")
    second = await world.call(editor, "propose_menu_create", {"name": "x", "items": []}, "b")
    assert first.proposal and second.proposal
    by_conversation = await world.get("/api/assistant/proposals?conversation=a", editor)
    assert [p["id"] for p in by_conversation["data"]] == [first.proposal["id"]]
    dismissed = await world.send(
        "POST", f"/api/assistant/proposals/{second.proposal['id']}/dismiss", editor
    )
    assert dismissed["status"] == "dismissed"
    pending = await world.get("/api/assistant/proposals?status=pending", editor)
    assert [p["id"] for p in pending["data"]] == [first.proposal["id"]]
    dismissed_again = await world.apply(editor, second.proposal["id"])
    assert dismissed_again.status == 409
    # Another person's proposal is not found, to read, apply or dismiss.
    for method, suffix in (("GET", ""), ("POST", "/apply"), ("POST", "/dismiss")):
        resp = await world.client.request(
            method,
            f"/api/assistant/proposals/{first.proposal['id']}{suffix}",
            headers=author.headers,
        )
        assert resp.status == 404
    assert (await world.get("/api/assistant/proposals", author))["data"] == []
    # The proposal JSON: everything the admin renders.
    shown = await world.get(f"/api/assistant/proposals/{first.proposal['id']}", editor)
    assert shown == {**first.proposal, "createdAt": shown["createdAt"]}
    assert set(shown) >= {
        "id",
        "conversationId",
        "userId",
        "tool",
        "target",
        "arguments",
        "diff",
        "targetVersion",
        "targetUpdatedAt",
        "status",
        "refusal",
        "needs",
        "recoverable",
    }
    assert shown["target"] == {"kind": "entry", "id": world.draft}


async def test_no_agent_key_reviews_or_applies_proposals(
    world: World, runtime: Any, clock: Any
) -> None:
    editor = world.team["editor"]
    out = await world.call(editor, "propose_entry_delete", {"entryId": world.draft})
    assert out.proposal
    key = await make_agent_key(runtime.db, clock, editor.id, ["content.read", "content.write"])
    headers = {"Authorization": f"Bearer {key}"}
    for method, suffix in (
        ("GET", ""),
        ("GET", f"/{out.proposal['id']}"),
        ("POST", f"/{out.proposal['id']}/apply"),
    ):
        resp = await world.client.request(
            method, f"/api/assistant/proposals{suffix}", headers=headers
        )
        assert resp.status == 403 and (await resp.json())["code"] == "KEY_FORBIDDEN"
    assert (await _entry(world, world.draft))["deletedAt"] is None


async def test_apply_body_takes_only_what_the_person_adds(world: World) -> None:
    admin = world.team["admin"]
    out = await world.call(admin, "propose_settings_update", {"title": "Acme"})
    assert out.proposal
    resp = await world.apply(admin, out.proposal["id"], title="Evil")
    assert resp.status == 400 and (await resp.json())["code"] == "VALIDATION_FAILED"
    assert (await world.get("/api/assistant/proposals?status=pending", admin))["data"]


async def test_granting_admin_asks_the_applying_person_for_their_password(world: World) -> None:
    owner, editor = world.team["owner"], world.team["editor"]
    out = await world.call(owner, "propose_person_role", {"userId": editor.id, "role": "admin"})
    assert out.proposal and "users.control" in out.proposal["needs"]
    wrong = await world.apply(owner, out.proposal["id"], currentPassword="not it")
    assert wrong.status in (401, 403)
    # A password the person can retype leaves the proposal pending.
    assert (await world.get(f"/api/assistant/proposals/{out.proposal['id']}", owner))[
        "status"
    ] == "pending"
    from tests.content.factories import PASSWORD

    ok = await world.apply(owner, out.proposal["id"], currentPassword=PASSWORD)
    assert ok.status == 200, await ok.text()
    assert (await world.get(f"/api/users/{editor.id}"))["role"] == "admin"


async def test_no_tool_outcome_or_proposal_carries_a_secret(world: World) -> None:
    admin = world.team["admin"]
    key = await world.call(admin, "propose_delivery_key", {"name": "Web", "types": ["*"]})
    hook = await world.call(
        admin, "propose_webhook_create", {"name": "h", "url": "http://127.0.0.1:9/x"}
    )
    assert key.proposal and hook.proposal
    applied_key = await (await world.apply(admin, key.proposal["id"])).json()
    applied_hook = await (await world.apply(admin, hook.proposal["id"])).json()
    stored = await world.get("/api/assistant/proposals", admin)
    for secret in (applied_key["secret"]["key"], applied_hook["secret"]["secret"]):
        assert secret not in str(stored) and secret not in str(key.content) + str(hook.content)
    # The secret is in the apply answer only, which is not cached.
    again = await world.get(f"/api/assistant/proposals/{key.proposal['id']}", admin)
    assert "secret" not in again


async def test_an_applied_proposal_moves_the_content_version_and_sends_its_webhook(
    world: World, receiver: Any, runtime: Any
) -> None:
    got, url = receiver
    await world.send(
        "POST", "/api/webhooks", json={"name": "site", "url": url, "events": ["entry.published"]}
    )
    editor = world.team["editor"]
    out = await world.call(
        editor, "propose_entry_status", {"entryId": world.draft, "status": "published"}
    )
    assert out.proposal
    await runtime.jobs.run_due()
    assert got.received == []  # a proposal changes nothing
    version = world.ctx.changes.version()
    resp = await world.apply(editor, out.proposal["id"])
    assert resp.status == 200
    assert world.ctx.changes.version() > version
    await runtime.jobs.run_due()
    [(_, _, body)] = got.received
    payload = json.loads(body)
    assert payload["type"] == "entry.published" and payload["data"]["id"] == world.draft


# tool, its arguments, and a manual change to the same target made meanwhile.
STALE: dict[str, tuple[dict[str, Any], tuple[str, str, dict[str, Any]]]] = {
    "propose_settings_update": (
        {"title": "Acme"},
        ("PATCH", "/api/settings", {"tagline": "Meanwhile"}),
    ),
    "propose_design_change": (
        {"surface": "header", "values": {"background": "#112233"}},
        ("PATCH", "/api/design/header", {"padding": "2rem"}),
    ),
    "propose_plugin_settings": (
        {"name": "gallery", "settings": {"columns": 4}},
        ("PATCH", "/api/plugins/gallery", {"settings": {"caption": "x"}}),
    ),
    "propose_type_update": (
        {"name": "page", "label": "Web page"},
        ("PATCH", "/api/types/page", {"previewUrl": "/p/{slug}"}),
    ),
    "propose_media_update": (
        {"mediaId": "{media}", "alt": "A"},
        ("PATCH", "/api/media/{media}", {"caption": "B"}),
    ),
    "propose_entry_terms": (
        {"entryId": "{about}", "terms": []},
        ("PATCH", "/api/entries/{about}", {"title": "Meanwhile"}),
    ),
}


@pytest.mark.parametrize("tool", sorted(STALE))
async def test_a_stale_proposal_is_refused_whatever_its_target(world: World, tool: str) -> None:
    admin = world.team["admin"]
    arguments, (method, path, change) = STALE[tool]
    ids = {"about": world.about, "media": world.media}
    args = {k: v.format(**ids) if isinstance(v, str) else v for k, v in arguments.items()}
    if tool == "propose_entry_terms":
        term = await world.send("POST", "/api/taxonomies/tags/terms", json={"name": "T"})
        args["terms"] = [term["id"]]
    out = await world.call(admin, tool, args)
    assert out.proposal, out.error
    await world.send(method, path.format(**ids), json=change)
    resp = await world.apply(admin, out.proposal["id"])
    assert resp.status == 409 and (await resp.json())["code"] == "PROPOSAL_STALE"
    shown = await world.get(f"/api/assistant/proposals/{out.proposal['id']}", admin)
    assert shown["status"] == "refused"
    # Nothing of the proposal was written.
    activity = await world.get(f"/api/activity?userId={admin.id}")
    assert activity["data"] == []
