// Entries: search, filter by type and status, sort, page; start a new entry.
import "../lib/shell.js";
import { ADMIN, api, can, latest, messageOf, query } from "../lib/api.js";
import { alertBox, h, labelled, replace, screenRoot, showAlert, when } from "../lib/dom.js";
import { cells, focusRows, keepScroll, pageCount, pager, readQuery, table, writeQuery } from "../lib/table.js";

const DEFAULTS = { search: "", type: "", status: "", sort: "-updatedAt", page: "1" };
const state = readQuery(DEFAULTS);
const root = screenRoot();

const search = h("input", { type: "search", value: state.search, placeholder: "Title or slug" });
const typeSelect = h("select", {}, h("option", { value: "" }, "All types"));
const statusSelect = h(
  "select",
  {},
  [["", "Any status"], ["draft", "Draft"], ["scheduled", "Scheduled"], ["published", "Published"], ["unpublished", "Unpublished"]].map(([v, t]) => h("option", { value: v, selected: v === state.status }, t)),
);
const sortSelect = h(
  "select",
  {},
  [["-updatedAt", "Last changed"], ["-createdAt", "Newest"], ["title", "Title A–Z"], ["-title", "Title Z–A"], ["-publishedAt", "Last published"]].map(([v, t]) => h("option", { value: v, selected: v === state.sort }, t)),
);
const newType = h("select", { "aria-label": "Type of the new entry" });
const newLink = h("a", { class: "button-link", href: `${ADMIN}/entries/new` }, "New entry");
const box = alertBox();
const list = h("div", { "aria-live": "polite" });
const pages = h("nav", { class: "pager", "aria-label": "Pages of entries" });

const filters = h(
  "form",
  { class: "toolbar", role: "search", "aria-label": "Entries" },
  labelled("Search", search),
  labelled("Type", typeSelect),
  labelled("Status", statusSelect),
  labelled("Sort by", sortSelect),
);
filters.addEventListener("submit", (event) => event.preventDefault());
replace(root, can("content.write") ? h("div", { class: "actions" }, newType, newLink) : null, filters, box, list, pages);

const typeLabels = {};
async function loadTypes() {
  const { ok, data } = await api("GET", "/types");
  if (!ok) return;
  for (const t of data.data) {
    typeLabels[t.name] = t.label || t.name;
    typeSelect.append(h("option", { value: t.name, selected: t.name === state.type }, t.label || t.name));
    newType.append(h("option", { value: t.name }, t.label || t.name));
  }
  const point = () => (newLink.href = `${ADMIN}/entries/new?type=${encodeURIComponent(newType.value)}`);
  newType.addEventListener("change", point);
  point();
  if (!data.data.length) {
    newType.hidden = true;
    newLink.hidden = true;
    showAlert(box, h("p", {}, "There are no content types yet. "), can("types.manage") ? h("a", { href: `${ADMIN}/types/new` }, "Create the first content type") : null);
  }
}

const fresh = latest();
const restoreScroll = keepScroll();
// moved: "page" (focus the new rows), "back" (restore the scroll), or "" (a filter).
async function load(moved = "") {
  const mine = fresh();
  const { ok, data } = await api("GET", "/entries" + query({ search: state.search, type: state.type, status: state.status, sort: state.sort, page: state.page, limit: 20 }));
  if (!mine()) return;
  if (!ok) {
    showAlert(box, h("p", {}, messageOf(data)));
    return;
  }
  // A page past the end (an old link, entries trashed since): the last page instead.
  if (!data.data.length && data.meta.total && Number(state.page) > pageCount(data.meta)) {
    state.page = String(pageCount(data.meta));
    writeQuery(state, DEFAULTS);
    return load(moved);
  }
  if (!data.data.length) {
    replace(list, h("p", { class: "muted" }, state.search || state.type || state.status ? "No entry matches." : "No entries yet."));
  } else {
    replace(
      list,
      table(
        "Entries",
        ["Title", "Type", "Status", "Changed"],
        data.data.map((e) =>
          cells(
            h("a", { href: `${ADMIN}/entries/${e.id}` }, e.title || "(untitled)"),
            typeLabels[e.type] || e.type,
            h("span", { class: `badge ${e.status}` }, e.publishAt && e.status === "draft" ? `scheduled ${when(e.publishAt)}` : e.status),
            when(e.updatedAt),
          ),
        ),
      ),
    );
  }
  pager(pages, data.meta, (page) => go({ page: String(page) }, true, "page"), "entries");
  if (moved === "page") focusRows(list);
  if (moved === "back") restoreScroll();
}

// A change of page or filter is a history entry (Back returns to it); typing a search replaces one.
function go(changes, push, moved = "") {
  Object.assign(state, changes);
  writeQuery(state, DEFAULTS, push);
  return load(moved);
}

addEventListener("popstate", () => {
  Object.assign(state, readQuery(DEFAULTS));
  search.value = state.search;
  typeSelect.value = state.type;
  statusSelect.value = state.status;
  sortSelect.value = state.sort;
  load("back");
});

let timer;
search.addEventListener("input", () => {
  clearTimeout(timer);
  timer = setTimeout(() => go({ search: search.value.trim(), page: "1" }, false), 250);
});
for (const [select, key] of [[typeSelect, "type"], [statusSelect, "status"], [sortSelect, "sort"]]) {
  select.addEventListener("change", () => go({ [key]: select.value, page: "1" }, true));
}
await loadTypes();
await load("back");
