// The visual preview: the host's page (its preview address with visual=1) in a
// sandboxed frame, its sections listed beside it. Select a section in the page
// or the list, reorder (drag, buttons, Alt+Arrow), hide and show it, edit its
// fields in the side panel. Every change is saved through PATCH /api/entries/:id
// (data.__layout, the fields, the title), then the frame shows a new preview.
// The frame talks to this page by postMessage only (lib/visual-frame.js).
import "../lib/shell.js";
import { ADMIN, api, can, latest, messageOf, query } from "../lib/api.js";
import { alertBox, announce, button, h, labelled, replace, screenRoot, setTitle, showAlert } from "../lib/dom.js";
import { fieldForm } from "../lib/field-form.js";
import { moveButtons, reorderable } from "../lib/reorder.js";
import { PreviewFrame } from "../lib/visual-frame.js";
import { partEditor } from "../lib/website-parts.js";

const root = screenRoot();
const box = alertBox();
const picker = h("select", { id: "visual-page" });
const frameStatus = h("p", { class: "status", role: "status", id: "frame-status" });
const links = h("div", { class: "actions" });
const sectionList = h("ol", { class: "sections", "aria-label": "Sections of the page" });
const panel = h("div", { class: "card", id: "visual-panel" });
const partList = h("ul", { class: "links", "aria-label": "Shared parts" });
const editable = can("content.write");

let definitions = [];
let definition = null; // of the chosen entry's type
let ctype = null; // the content type (field types for the inputs)
let entry = null;
let sections = []; // [{id, label, movable, hidden, fields}] in the page's order
let selected = { section: null, field: null, part: null };
let parts = []; // the website manifest's shared parts (GET /api/website)
const frame = new PreviewFrame({ onReady: framed, onSelect: (section, field) => select(section, field, true), onPart: (id) => selectPart(id, true) });

function layout() {
  const saved = (entry && entry.data && entry.data.__layout) || {};
  return { order: [...(saved.order || [])], hidden: [...(saved.hidden || [])] };
}

// Before the frame reports, the definition's order with the saved layout on it
// (as render_visual arranges the page); afterwards, what the page shows.
function declaredSections() {
  const { order, hidden } = layout();
  const all = definition.sections.map((s) => ({ ...s, hidden: hidden.includes(s.id) }));
  const movable = all.filter((s) => s.movable);
  const rank = (s) => (order.includes(s.id) ? order.indexOf(s.id) : order.length + movable.indexOf(s));
  const sorted = [...movable].sort((a, b) => rank(a) - rank(b));
  return all.map((s) => (s.movable ? sorted.shift() : s));
}

// Layout saves in flight: until they are answered the list is ahead of any
// page the frame shows, so a report from the frame does not redraw it.
let saving = 0;

function framed(reported) {
  if (saving) return;
  const known = new Map(definition.sections.map((s) => [s.id, s]));
  sections = reported.filter((s) => known.has(s.id)).map((s) => ({ ...known.get(s.id), hidden: s.hidden }));
  frameStatus.textContent = "The preview is up to date.";
  drawSections();
  frame.parts(parts);
  frame.outline(selected.section, selected.field, selected.part);
}

function movableIndex(id) {
  return sections.filter((s) => s.movable).findIndex((s) => s.id === id);
}

// Moves the from-th movable section to the to-th movable place; pinned ones stay.
async function move(from, to) {
  const movable = sections.filter((s) => s.movable);
  const [taken] = movable.splice(from, 1);
  movable.splice(to, 0, taken);
  sections = sections.map((s) => (s.movable ? movable.shift() : s));
  drawSections();
  await saveLayout(`${taken.label} moved to position ${to + 1}`);
}

async function toggleHidden(section) {
  section.hidden = !section.hidden;
  drawSections();
  await saveLayout(section.hidden ? `${section.label} is hidden on the public page` : `${section.label} is shown again`);
}

async function saveLayout(said) {
  frameStatus.textContent = "Saving…";
  const next = { order: sections.map((s) => s.id), hidden: sections.filter((s) => s.hidden).map((s) => s.id) };
  saving += 1;
  const result = await api("PATCH", `/entries/${entry.id}`, { data: { __layout: next } });
  saving -= 1;
  if (!result.ok) {
    showAlert(box, h("p", {}, `Nothing was saved: ${messageOf(result.data)}`));
    announce("Nothing was saved");
    return reload();
  }
  showAlert(box);
  entry = result.data;
  announce(`${said}. Saved.`);
  await reload();
}

function drawSections() {
  const count = () => sections.filter((s) => s.movable).length;
  const items = sections.map((section) => {
    const name = section.label;
    const choose = button(name, () => select(section.id, null, false), {
      class: "link section-name",
      "aria-pressed": String(selected.section === section.id),
      "aria-label": `Select ${name}`,
      dataset: { choose: section.id },
    });
    const hide = editable
      ? button(section.hidden ? "Show" : "Hide", () => toggleHidden(section), { class: "small", "aria-label": `${section.hidden ? "Show" : "Hide"} ${name}`, dataset: { hide: section.id } })
      : null;
    let moves = null;
    if (editable && section.movable) {
      moves = moveButtons(() => movableIndex(section.id), count, (from, to) => move(from, to), (i) => sections.filter((s) => s.movable)[i].label);
      moves.label(name);
      moves.up.dataset.move = `${section.id}-up`;
      moves.down.dataset.move = `${section.id}-down`;
      moves.handle.dataset.move = `${section.id}-handle`;
    }
    return h(
      "li",
      { class: `item section${section.movable ? " movable" : " pinned"}${selected.section === section.id ? " chosen" : ""}`, dataset: { section: section.id } },
      h(
        "div",
        { class: "item-head" },
        moves ? moves.handle : null,
        h("span", { class: "grow" }, choose),
        section.hidden ? h("span", { class: "badge" }, "Hidden") : null,
        section.movable ? null : h("span", { class: "badge" }, "Fixed in place"),
      ),
      h("div", { class: "actions" }, moves ? [moves.up, moves.down] : null, hide),
    );
  });
  // A redraw keeps focus on the control that had it (the same section's).
  const had = sectionList.contains(document.activeElement) ? document.activeElement.dataset : null;
  const key = had && (had.move ? `[data-move="${had.move}"]` : had.hide ? `[data-hide="${had.hide}"]` : had.choose ? `[data-choose="${had.choose}"]` : null);
  replace(sectionList, items);
  if (editable) reorderable(sectionList, { draggable: ".movable", onMove: (from, to) => move(from, to) });
  const again = key ? sectionList.querySelector(key) : null;
  if (again) again.focus();
}

// The side panel: the selected section's fields (or the one field clicked).
function select(sectionId, field, fromFrame) {
  selected = { section: sectionId, field, part: null };
  for (const li of sectionList.children) {
    const on = li.dataset.section === sectionId;
    li.classList.toggle("chosen", on);
    li.querySelector(".section-name").setAttribute("aria-pressed", String(on));
  }
  frame.outline(sectionId, field);
  drawPanel(fromFrame);
}

function inputDef(key) {
  if (key === "$title") return { key, type: "text", label: "Title", maxLength: 300 };
  const info = definition.fields.find((f) => f.key === key) || {};
  const own = (ctype.fields || []).find((f) => f.key === key) || { key, type: "text" };
  const def = { ...own, label: own.label || key };
  if (info.formatted) {
    return { ...def, type: "textarea", help: "Formatted text: only italics (<i>…</i>) and line breaks (<br>) are kept." };
  }
  if (info.reference) return { ...def, type: "reference", to: info.reference.type, by: "slug", label: info.reference.label || def.label, help: `Search the ${info.reference.type} entries; the page shows the one chosen.` };
  return ["text", "textarea", "number", "url", "email", "select", "color", "boolean", "date"].includes(own.type) ? def : null;
}

function drawPanel(fromFrame) {
  const section = sections.find((s) => s.id === selected.section) || definition.sections.find((s) => s.id === selected.section);
  if (!section && !selected.field) {
    replace(panel, h("h2", {}, "Fields"), h("p", { class: "muted" }, "Select a section in the page or in the list to edit its fields."));
    return;
  }
  const keys = section ? section.fields : [selected.field];
  const defs = [];
  const skipped = [];
  for (const key of keys) {
    const def = inputDef(key);
    if (!def) skipped.push(key);
    else defs.push(def);
  }
  const values = {};
  for (const def of defs) values[def.key] = def.key === "$title" ? entry.title : entry.data[def.key];
  const heading = section ? section.label : selected.field;
  const { form, fields } = fieldForm({
    defs,
    values,
    label: heading,
    submitLabel: `Save ${heading}`,
    editable: editable && defs.length > 0,
    keyOf: (key) => (key === "title" ? "$title" : key),
    save: (changed) => {
      const { $title: title, ...data } = changed;
      const body = Object.keys(data).length ? { data } : {};
      if (title !== undefined) body.title = title;
      return api("PATCH", `/entries/${entry.id}`, body);
    },
    saved: (data) => {
      entry = data;
      reload();
    },
  });
  if (section && section.collection) {
    form.append(h("p", { class: "muted" }, `This section lists the ${section.collection.label} entries: `, h("a", { href: `${ADMIN}/entries?type=${encodeURIComponent(section.collection.type)}` }, `edit the ${section.collection.label}`), "."));
  }
  if (skipped.length) form.append(h("p", { class: "muted" }, `${skipped.join(", ")}: edit in the `, h("a", { href: `${ADMIN}/entries/${entry.id}` }, "entry editor"), "."));
  if (!defs.length && !(section && section.collection) && !skipped.length) form.append(h("p", { class: "muted" }, "This section has no fields to edit."));
  replace(panel, h("h2", { id: "panel-heading" }, heading), form);
  if (fromFrame && selected.field) {
    const found = fields.locate(selected.field);
    if (found) found.input.focus();
  }
}

// A shared part (the header's menu, the footer...): its editor in the side panel.
async function selectPart(id, fromFrame) {
  const part = parts.find((p) => p.id === id);
  if (!part) return;
  selected = { section: null, field: null, part: id };
  for (const li of sectionList.children) {
    li.classList.remove("chosen");
    li.querySelector(".section-name").setAttribute("aria-pressed", "false");
  }
  frame.outline(null, null, id);
  const body = h("div", {}, h("p", { class: "help" }, part.description ? `${part.description}. ` : "", "Shared by every page: a change shows everywhere."));
  replace(panel, h("h2", { id: "panel-heading", tabindex: -1 }, part.label), body);
  await partEditor(part, body, async () => {
    await loadParts();
    await reload();
  });
  if (fromFrame) {
    const first = body.querySelector("input, select, textarea");
    (first || panel.querySelector("h2")).focus();
  }
}

async function loadParts() {
  const { ok, data } = await api("GET", "/website");
  parts = ok ? data.parts : [];
  replace(partList, parts.map((p) => h("li", {}, button(`Edit ${p.label}`, () => selectPart(p.id, true), { class: "link", dataset: { part: p.id } }))));
}

// A new preview token for the saved entry, shown in the frame.
const freshPreview = latest();
async function reload() {
  const mine = freshPreview();
  frameStatus.textContent = "Loading the preview…";
  const { ok, data } = await api("POST", `/entries/${entry.id}/preview`, {});
  // Only the newest save's page is shown: an older answer arriving late is dropped.
  if (!mine()) return;
  if (!ok) {
    frameStatus.textContent = "";
    return showAlert(box, h("p", {}, messageOf(data)));
  }
  if (!data.siteUrl) {
    frameStatus.textContent = "";
    return showAlert(box, h("p", {}, "This content type has no preview address: set one on its content type to preview it here."));
  }
  const sep = data.siteUrl.includes("?") ? "&" : "?";
  frame.load(`${data.siteUrl}${sep}visual=1`);
}

const freshEntry = latest();
async function open(id) {
  const mine = freshEntry();
  const got = await api("GET", `/entries/${id}`);
  if (!mine()) return;
  if (!got.ok) return showAlert(box, h("p", {}, messageOf(got.data)));
  entry = got.data;
  definition = definitions.find((d) => d.type === entry.type);
  const typeAnswer = await api("GET", `/types/${entry.type}`);
  if (!mine()) return;
  ctype = typeAnswer.ok ? typeAnswer.data : { fields: [] };
  setTitle(`Visual editor: ${entry.title || entry.slug}`);
  frame.title(`Preview of ${entry.title || entry.slug}`);
  replace(links, h("a", { href: `${ADMIN}/entries/${entry.id}` }, "Open in the entry editor"), h("a", { href: `${ADMIN}/website` }, "Website parts"));
  sections = declaredSections();
  selected = { section: null, field: null, part: null };
  drawSections();
  drawPanel(false);
  history.replaceState(null, "", `${ADMIN}/visual?entry=${encodeURIComponent(entry.id)}`);
  await reload();
}

async function start() {
  const { ok, data } = await api("GET", "/visual");
  if (!ok) return replace(root, h("p", { class: "alert", role: "alert" }, messageOf(data)));
  definitions = data.data;
  await loadParts();
  if (!definitions.length) return replace(root, h("p", { class: "muted" }, "The site declares no visual pages: types without a visual definition are edited in the entry editor."));
  const options = [];
  for (const d of definitions) {
    const list = await api("GET", `/entries${query({ type: d.type, sort: "title", limit: 100 })}`);
    if (list.ok) for (const e of list.data.data) options.push({ id: e.id, label: `${e.title || e.slug} (${d.type})` });
  }
  if (!options.length) return replace(root, h("p", { class: "muted" }, "No page to edit yet."));
  const wanted = new URLSearchParams(location.search).get("entry");
  replace(picker, options.map((o) => h("option", { value: o.id, selected: o.id === wanted }, o.label)));
  picker.addEventListener("change", () => open(picker.value));
  replace(
    root,
    box,
    h("div", { class: "toolbar" }, labelled("Page", picker), links),
    h(
      "div",
      { class: "visual" },
      h("div", { class: "visual-stage" }, frame.el, frameStatus),
      h(
        "div",
        { class: "visual-side" },
        h("section", { class: "card", "aria-labelledby": "sections-heading" }, h("h2", { id: "sections-heading" }, "Sections"), h("p", { class: "help", id: "sections-help" }, "Drag a handle, use Move up and Move down, or Alt+Up and Alt+Down on a handle. Each change is saved at once."), sectionList),
        panel,
        parts.length ? h("section", { class: "card", "aria-labelledby": "parts-heading" }, h("h2", { id: "parts-heading" }, "Shared parts"), h("p", { class: "help" }, "Click the header or footer in the page, or choose here."), partList) : null,
      ),
    ),
  );
  open(picker.value);
}

start();
