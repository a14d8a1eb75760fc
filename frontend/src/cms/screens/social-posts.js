// Social posts: filtered by status, paged (state kept in the address); a new post.
import "../lib/shell.js";
import { ADMIN, api, can, latest, messageOf, query } from "../lib/api.js";
import { alertBox, h, labelled, replace, screenRoot, showAlert, when } from "../lib/dom.js";
import { STATUSES, excerpt, postHref, socialNav, statusBadge } from "../lib/social.js";
import { cells, pager, readQuery, table, writeQuery } from "../lib/table.js";

const DEFAULTS = { status: "", page: "1" };
const state = readQuery(DEFAULTS);
const root = screenRoot();
const statusSelect = h("select", {}, h("option", { value: "" }, "Any status"), STATUSES.map((s) => h("option", { value: s, selected: s === state.status }, s)));
const box = alertBox();
const list = h("div", { "aria-live": "polite" });
const pages = h("nav", { class: "pager", "aria-label": "Pages of social posts" });
const filters = h("form", { class: "toolbar", role: "search", "aria-label": "Social posts" }, labelled("Status", statusSelect));
filters.addEventListener("submit", (event) => event.preventDefault());
replace(
  root,
  socialNav("/posts"),
  can("social.write") ? h("div", { class: "actions" }, h("a", { class: "button-link", href: `${ADMIN}/social/posts/new` }, "New post")) : null,
  filters,
  box,
  list,
  pages,
);

const labels = {};
function accountsOf(post) {
  if (!post.targets.length) return h("span", { class: "muted" }, "no account");
  return h("ul", { class: "plain" }, post.targets.map((t) => h("li", {}, `${labels[t.network] || t.network} @${t.handle}`, t.status === "failed" ? " (failed)" : "")));
}

const fresh = latest();
async function load() {
  const mine = fresh();
  writeQuery(state, DEFAULTS);
  const { ok, data } = await api("GET", "/social/posts" + query({ status: state.status, page: state.page, limit: 20 }));
  if (!mine()) return;
  if (!ok) return showAlert(box, h("p", {}, messageOf(data)));
  showAlert(box);
  if (!data.data.length) {
    replace(list, h("p", { class: "muted" }, state.status ? `No ${state.status} post.` : "No social posts yet."));
  } else {
    replace(
      list,
      table(
        "Social posts",
        ["Post", "Status", "Accounts", "When", "Changed"],
        data.data.map((p) =>
          cells(
            h("a", { href: postHref(p.id) }, excerpt(p.text)),
            statusBadge(p.status),
            accountsOf(p),
            p.scheduledAt ? `scheduled ${when(p.scheduledAt)}` : p.sentAt ? `sent ${when(p.sentAt)}` : "",
            when(p.updatedAt),
          ),
        ),
      ),
    );
  }
  pager(pages, data.meta, (page) => ((state.page = String(page)), load()), "posts");
}
statusSelect.addEventListener("change", () => ((state.status = statusSelect.value), (state.page = "1"), load()));
const nets = await api("GET", "/social/networks");
if (nets.ok) for (const n of nets.data.data) labels[n.network] = n.label;
await load();
