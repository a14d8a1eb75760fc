// Activity: who changed what, newest first, filtered by kind of record.
import "../lib/shell.js";
import { ADMIN, api, latest, messageOf, query } from "../lib/api.js";
import { h, labelled, replace, screenRoot, when } from "../lib/dom.js";
import { cells, pager, readQuery, table, writeQuery } from "../lib/table.js";

const DEFAULTS = { subjectKind: "", page: "1" };
const KINDS = ["", "entry", "type", "taxonomy", "term", "menu", "settings", "media", "user", "agent_key", "delivery_key", "webhook"];
const state = readQuery(DEFAULTS);
const root = screenRoot();
const kind = h("select", {}, KINDS.map((k) => h("option", { value: k, selected: k === state.subjectKind }, k || "Everything")));
const list = h("div");
const pages = h("nav", { class: "pager", "aria-label": "Pages of activity" });
replace(root, h("div", { class: "toolbar" }, labelled("Show", kind)), list, pages);

function subject(a) {
  if (a.subject.kind === "entry" && !a.action.endsWith("purged")) return h("a", { href: `${ADMIN}/entries/${a.subject.id}` }, `entry ${a.summary && a.summary.title ? `“${a.summary.title}”` : a.subject.id}`);
  if (a.subject.kind === "type") return h("a", { href: `${ADMIN}/types/${a.subject.id}` }, `type ${a.subject.id}`);
  return `${a.subject.kind} ${a.subject.id}`;
}

const fresh = latest();
async function load() {
  const mine = fresh();
  writeQuery(state, DEFAULTS);
  const { ok, data } = await api("GET", "/activity" + query({ subjectKind: state.subjectKind, page: state.page, limit: 30 }));
  if (!mine()) return;
  if (!ok) return replace(list, h("p", { class: "alert", role: "alert" }, messageOf(data)));
  replace(
    list,
    data.data.length
      ? table("Activity", ["When", "Who", "What", "On"], data.data.map((a) => cells(when(a.at), `${a.actor.name || a.actor.kind}${a.actor.kind === "agent_key" ? " (agent key)" : ""}`, a.action, subject(a))))
      : h("p", { class: "muted" }, "Nothing happened yet."),
  );
  pager(pages, data.meta, (page) => ((state.page = String(page)), load()), "changes");
}
kind.addEventListener("change", () => ((state.subjectKind = kind.value), (state.page = "1"), load()));
load();
