// The entry editor: every field type's input, save with errors on the named
// inputs, publish / unpublish / schedule, revisions with a diff and restore,
// trash, and who else is here (presence) with a notice when they save.
import "../lib/shell.js";
import { diffLines } from "diff";
import { ADMIN, api, can, me, messageOf, query } from "../lib/api.js";
import { alertBox, announce, button, h, labelled, replace, screenRoot, setTitle, showAlert, when } from "../lib/dom.js";
import { watch } from "../lib/live.js";
import { setOpenEditor } from "../lib/editing.js";
import { fieldAssistant } from "../fields/assist.js";
import { Problems } from "../lib/problems.js";
import { FieldSet } from "../fields/index.js";
import { FIND_FROM, finder } from "../lib/finder.js";
import { fromLocalInput, toLocalInput, zoneName } from "../fields/basic.js";

const page = document.body.dataset;
const root = screenRoot();
let entry = null; // the saved entry, as the API last answered
let type = null;
let dirty = false;
let saving = false;
let missedEvent = false;
let viewersNow = null;

async function start() {
  if (page.entry) {
    const found = await api("GET", `/entries/${encodeURIComponent(page.entry)}`);
    if (!found.ok) return replace(root, h("p", { class: "alert", role: "alert" }, messageOf(found.data)));
    entry = found.data;
  }
  const typeName = entry ? entry.type : page.type;
  if (!typeName) return chooseType();
  const found = await api("GET", `/types/${encodeURIComponent(typeName)}`);
  if (!found.ok) return replace(root, h("p", { class: "alert", role: "alert" }, messageOf(found.data)));
  type = found.data;
  build();
  if (entry) {
    live();
    setOpenEditor({
      kind: "entry",
      id: entry.id,
      isDirty: () => dirty,
      save: () => submit({}),
      reload,
      forget: () => (dirty = false),
    });
  }
}

// Reads the saved entry again and redraws the form (the assistant applied a
// proposal, or the person discarded their changes).
async function reload(note) {
  const { ok, data } = await api("GET", `/entries/${entry.id}`);
  if (!ok) return false;
  entry = data;
  dirty = false;
  build();
  refreshSide();
  if (viewersNow) showViewers(viewersNow);
  if (note) {
    document.getElementById("save-status").textContent = note;
    announce(note);
  }
  return true;
}

async function chooseType() {
  setTitle("New entry");
  const { data } = await api("GET", "/types");
  replace(
    root,
    h("p", {}, "Which kind of entry?"),
    h("ul", {}, (data.data || []).map((t) => h("li", {}, h("a", { href: `${ADMIN}/entries/new?type=${encodeURIComponent(t.name)}` }, t.label || t.name)))),
  );
}

// --- the form ------------------------------------------------------------------

let form;
let fields;
let problems;
let inputs;
let side;
let filed; // the terms picker: in the side panel, or alone beside a new entry

function build() {
  setTitle(entry ? entry.title || "(untitled)" : `New ${type.label || type.name}`);
  inputs = {
    title: h("input", { type: "text", value: entry ? entry.title : "", required: true, maxlength: 300 }),
    slug: h("input", { type: "text", value: entry ? entry.slug : "", maxlength: 200, spellcheck: "false" }),
    locale: h("input", { type: "text", value: entry ? entry.locale : "en", maxlength: 35, spellcheck: "false" }),
  };
  const wraps = {
    title: labelled("Title (required)", inputs.title),
    slug: labelled("Slug", inputs.slug, { help: "The address part; left empty, it is made from the title." }),
    locale: labelled("Locale", inputs.locale),
  };
  fields = new FieldSet(type.fields, entry ? entry.data : undefined);
  for (const def of type.fields) fieldAssistant(def, fields.widgets.get(def.key), () => inputs.title.value);
  const box = alertBox();
  problems = new Problems(box, (key) => {
    if (wraps[key]) return { wrap: wraps[key], input: inputs[key], label: wraps[key].querySelector("label").textContent };
    if (key === "publishAt" && side) return side.schedule;
    if (key.startsWith("terms") && filed && filed.boxes.length) return { wrap: filed.el, input: filed.boxes[0], label: "Filed under" };
    const found = fields.locate(key);
    return found || (key.startsWith("data.") ? fields.locate(key.slice(5)) : null);
  });
  const save = h("button", { type: "submit", class: "primary" }, entry ? "Save" : "Create");
  form = h(
    "form",
    { class: "card", novalidate: true, "aria-label": "Entry" },
    box,
    wraps.title,
    h("div", { class: "row" }, wraps.slug, wraps.locale),
    fields.els,
    h("div", { class: "actions" }, save, h("span", { class: "status", role: "status", id: "save-status" })),
  );
  form.addEventListener("input", () => (dirty = true));
  form.addEventListener("change", () => (dirty = true));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    await submit({});
  });
  side = entry ? sidePanel() : null;
  // A new entry is filed under terms from the start: saved with its first save.
  filed = side ? side.terms : filing();
  const aside = side ? side.el : h("aside", { class: "side", "aria-label": "Filing" }, termsCard(filed));
  // Another person's save is told above the form, where it is seen at any width.
  replace(root, side ? side.notice : null, h("div", { class: "editor" }, h("div", {}, form), aside));
}

function collect() {
  const { values, problems: own } = fields.collect();
  const body = { title: inputs.title.value.trim(), data: values, locale: inputs.locale.value.trim() || "en" };
  if (inputs.slug.value.trim()) body.slug = inputs.slug.value.trim();
  if (filed && filed.loaded) body.terms = filed.boxes.filter((b) => b.checked).map((b) => b.value);
  return { body, own };
}

// Saves the form (and any status change in `extra`) in one request.
async function submit(extra) {
  const status = document.getElementById("save-status");
  status.textContent = "";
  const { body, own } = collect();
  if (own.length) {
    problems.show({ error: "Nothing was saved", code: "VALIDATION_FAILED", details: { fields: own } });
    announce(`Nothing was saved: ${own.map((p) => `${p.key} ${p.message}`).join("; ")}`);
    return false;
  }
  saving = true;
  const result = entry
    ? await api("PATCH", `/entries/${entry.id}`, { ...body, ...extra })
    : await api("POST", "/entries", { type: type.name, ...body, ...extra });
  saving = false;
  if (!result.ok) {
    problems.show(result.data);
    const listed = (result.data.details && result.data.details.fields) || [];
    announce(listed.length ? `Nothing was saved: ${listed.map((p) => `${p.key} ${p.message}`).join("; ")}` : messageOf(result.data));
    if (missedEvent) check();
    return false;
  }
  problems.clear();
  if (!entry) {
    dirty = false;
    location.replace(`${ADMIN}/entries/${result.data.id}?created=1`);
    return true;
  }
  entry = result.data;
  dirty = false;
  setTitle(entry.title || "(untitled)");
  inputs.slug.value = entry.slug;
  status.textContent = `Saved (revision ${entry.revision}).`;
  announce(`Saved, revision ${entry.revision}`);
  refreshSide();
  if (missedEvent) check();
  return true;
}

// --- status, schedule, trash, revisions, presence ------------------------------

function sidePanel() {
  const badge = h("span", { class: "badge" });
  const statusText = h("p", { id: "entry-status" }, "Status: ", badge);
  const when_ = h("input", { type: "datetime-local" });
  const schedule = labelled("Publish at", when_, { help: `Your time zone (${zoneName()}).` });
  const buttons = h("div", { class: "actions" });
  const trash = button("Move to the trash", async () => {
    if (!window.confirm("Move this entry to the trash? It can be restored from there.")) return;
    const { ok, data } = await api("DELETE", `/entries/${entry.id}`);
    if (ok) {
      dirty = false;
      location.assign(`${ADMIN}/trash?moved=${encodeURIComponent(entry.title)}`);
    }
    else showAlert(statusBox, h("p", {}, messageOf(data)));
  }, { class: "danger" });
  const statusBox = alertBox();
  const viewers = h("ul", { class: "presence", "aria-label": "Also editing this entry" });
  const notice = h("div", { class: "notice", role: "alert", hidden: true, id: "live-notice" });
  const revisions = h("ol", { class: "revisions", reversed: true });
  const terms = filing();
  const diffBox = h("div", { id: "revision-diff", "aria-live": "polite" });
  const el = h(
    "aside",
    { class: "side", "aria-label": "Publishing and history" },
    h("section", { class: "card", "aria-labelledby": "presence-h" }, h("h2", { id: "presence-h" }, "Who is here"), viewers),
    h(
      "section",
      { class: "card", "aria-labelledby": "publish-h" },
      h("h2", { id: "publish-h" }, "Publishing"),
      statusBox,
      statusText,
      buttons,
      can("content.publish") ? schedule : null,
      can("content.publish") ? h("div", { class: "actions" }, button("Schedule", () => scheduleAt(fromLocalInput(when_.value))), button("Cancel the schedule", () => scheduleAt(null), { id: "cancel-schedule" })) : null,
      h("div", { class: "actions" }, trash),
    ),
    termsCard(terms),
    h("section", { class: "card", "aria-labelledby": "revisions-h" }, h("h2", { id: "revisions-h" }, "Revisions"), revisions, diffBox),
  );
  return { el, terms, badge, buttons, when: when_, schedule: { wrap: schedule, input: when_, label: "Publish at" }, viewers, notice, revisions, diffBox, statusBox };
}

function termsCard(terms) {
  return h("section", { class: "card", "aria-labelledby": "terms-h" }, h("h2", { id: "terms-h" }, "Filed under"), terms.el);
}

// The taxonomies' terms as checkboxes, all in one request; a long taxonomy
// gets a search box and a scrolling list. Saved with the entry (terms are not revised).
function filing() {
  const el = h("div", { class: "field" }, h("p", { class: "muted" }, "Loading…"));
  const state = { el, boxes: [], loaded: false };
  const filedIds = new Set(((entry && entry.terms) || []).map((t) => t.id));
  (async () => {
    const { ok, data } = await api("GET", "/taxonomies" + query({ include: "terms" }));
    if (!ok) return;
    const groups = [];
    for (const taxonomy of data.data) {
      if (!taxonomy.terms.length) continue;
      const rows = taxonomy.terms.map((term) => {
        const box = h("input", { type: "checkbox", value: term.id, id: `term-${term.id}`, checked: filedIds.has(term.id), disabled: !can("content.write") });
        box.addEventListener("change", () => (dirty = true));
        state.boxes.push(box);
        return h("div", { class: "check" }, box, h("label", { for: box.id }, term.name));
      });
      const long = rows.length >= FIND_FROM;
      groups.push(
        h(
          "fieldset",
          {},
          h("legend", {}, taxonomy.name),
          long ? finder(`Find in ${taxonomy.name}`, rows, { keep: (row) => row.querySelector("input").checked }) : null,
          h("div", { class: long ? "term-list scroll" : "term-list" }, rows),
        ),
      );
    }
    state.loaded = true;
    replace(el, groups.length ? groups : h("p", { class: "muted" }, "No terms yet: add them under Taxonomies."), h("p", { class: "help" }, "Saved with the entry."), h("p", { class: "field-error", id: "terms-error", hidden: true }));
  })();
  return state;
}

async function scheduleAt(at) {
  const ok = await submit({ publishAt: at });
  if (ok) announce(at ? `Scheduled for ${when(at)}` : "Schedule cancelled");
}

function refreshSide() {
  if (!side) return;
  const scheduled = entry.status === "draft" && entry.publishAt;
  side.badge.className = `badge ${entry.status}`;
  side.badge.textContent = scheduled ? `draft, scheduled for ${when(entry.publishAt)}` : entry.status;
  side.when.value = toLocalInput(entry.publishAt);
  const moves = [];
  if (can("content.publish")) {
    if (entry.status !== "published") moves.push(button("Publish", () => submit({ status: "published" }), { class: "primary" }));
    if (entry.status === "published") moves.push(button("Unpublish", () => submit({ status: "unpublished" })));
    if (entry.status !== "draft") moves.push(button("Back to draft", () => submit({ status: "draft" })));
  }
  replace(side.buttons, moves);
  const cancel = document.getElementById("cancel-schedule");
  if (cancel) cancel.hidden = !scheduled;
  loadRevisions();
}

async function loadRevisions() {
  const { ok, data } = await api("GET", `/entries/${entry.id}/revisions` + query({ limit: 10 }));
  if (!ok) return;
  replace(
    side.revisions,
    data.data.map((rev) =>
      h(
        "li",
        {},
        h("span", {}, `#${rev.number} · ${rev.actor && rev.actor.name ? rev.actor.name : "system"} · ${when(rev.createdAt)}`),
        rev.note ? h("span", { class: "muted" }, ` (${rev.note})`) : null,
        h(
          "div",
          { class: "actions" },
          button("Compare", () => compare(rev), { class: "small", "aria-label": `Compare revision ${rev.number} with the saved entry` }),
          rev.number !== entry.revision && can("content.write")
            ? button("Restore", () => restore(rev), { class: "small", "aria-label": `Restore revision ${rev.number}` })
            : null,
        ),
      ),
    ),
  );
}

function snapshot(x) {
  return JSON.stringify({ title: x.title, slug: x.slug, locale: x.locale, data: x.data }, null, 2) + "\n";
}

async function compare(rev) {
  const full = await api("GET", `/entries/${entry.id}/revisions/${rev.number}`);
  if (!full.ok) return;
  const parts = diffLines(snapshot(full.data), snapshot(entry));
  const changed = parts.some((p) => p.added || p.removed);
  replace(
    side.diffBox,
    h("h3", {}, `Revision ${rev.number} → saved entry`),
    changed
      ? h(
          "div",
          { class: "diff", tabindex: 0, role: "region", "aria-label": `Differences between revision ${rev.number} and the saved entry` },
          parts.map((p) =>
            p.added
              ? h("ins", {}, h("span", { class: "visually-hidden" }, "added: "), p.value)
              : p.removed
                ? h("del", {}, h("span", { class: "visually-hidden" }, "removed: "), p.value)
                : h("span", { class: "muted" }, p.value),
          ),
        )
      : h("p", {}, "No difference: this is what is saved."),
  );
  announce(changed ? `Showing the differences with revision ${rev.number}` : "No difference");
}

async function restore(rev) {
  if (dirty && !window.confirm("Restoring replaces your unsaved changes. Restore anyway?")) return;
  const { ok, data } = await api("POST", `/entries/${entry.id}/revisions/${rev.number}/restore`);
  if (!ok) {
    showAlert(side.statusBox, h("p", {}, messageOf(data)));
    return;
  }
  entry = data;
  dirty = false;
  build();
  refreshSide();
  if (viewersNow) showViewers(viewersNow);
  document.getElementById("save-status").textContent = `Restored revision ${rev.number} as revision ${entry.revision}.`;
  announce(`Restored revision ${rev.number}`);
}

// --- live: presence and saves by others ------------------------------------------

function showViewers(viewers) {
  viewersNow = viewers;
  const others = viewers.filter((v) => v.id !== me.id);
  replace(
    side.viewers,
    h("li", {}, `${me.name || me.email} (you)`),
    others.map((v) => h("li", {}, v.name || "someone")),
  );
  if (others.length) announce(`Also here: ${others.map((v) => v.name).join(", ")}`);
}

async function check() {
  missedEvent = false;
  const { ok, data, status } = await api("GET", `/entries/${entry.id}`);
  if (!ok) {
    if (status === 404) showNotice("This entry was moved to the trash by someone else.", false);
    return;
  }
  if (data.revision <= entry.revision) return;
  const revs = await api("GET", `/entries/${entry.id}/revisions` + query({ limit: 1 }));
  // Read again meanwhile (the assistant's proposal applied here): nothing to tell.
  if (data.revision <= entry.revision) return;
  const who = revs.ok && revs.data.data[0] && revs.data.data[0].actor ? revs.data.data[0].actor.name : "Someone";
  showNotice(`${who} saved this entry (revision ${data.revision}).`, true, data);
}

function showNotice(text, reloadable, fresh) {
  const reload = reloadable
    ? button(dirty ? "Load their version (discard my changes)" : "Load their version", () => {
        entry = fresh;
        dirty = false;
        build();
        refreshSide();
        if (viewersNow) showViewers(viewersNow);
        announce("Loaded the latest version");
      })
    : null;
  replace(side.notice, h("p", {}, text), dirty ? h("p", {}, "You have unsaved changes: saving now would overwrite theirs.") : null, reload);
  side.notice.hidden = false;
}

function live() {
  refreshSide();
  if (new URLSearchParams(location.search).has("created")) {
    document.getElementById("save-status").textContent = `Created (revision ${entry.revision}).`;
    history.replaceState(null, "", location.pathname);
  }
  watch(`entry:${entry.id}`, {
    onPresence: showViewers,
    onEvent: () => {
      if (saving) missedEvent = true;
      else check();
    },
  });
}

// Leaving with unsaved changes asks first (the browser's own question).
window.addEventListener("beforeunload", (event) => {
  if (dirty && !saving) event.preventDefault();
});

start();
