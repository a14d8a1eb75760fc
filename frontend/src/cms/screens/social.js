// Social overview: posts counted by status (each a link to the filtered list),
// the next and the last sent, and every connection needing attention named
// (account and network) with the way to fix it.
import "../lib/shell.js";
import { ADMIN, api, can, messageOf } from "../lib/api.js";
import { h, replace, screenRoot, when } from "../lib/dom.js";
import { STATUSES, consentOutcome, postHref, socialNav } from "../lib/social.js";

const root = screenRoot();
const notice = h("div");
replace(root, socialNav(""), notice, h("p", { class: "muted" }, "Loading…"));

consentOutcome(notice);

const [overview, nets] = await Promise.all([api("GET", "/social/overview"), api("GET", "/social/networks")]);
if (!overview.ok) {
  replace(root, socialNav(""), h("p", { class: "alert", role: "alert" }, messageOf(overview.data)));
} else {
  const data = overview.data;
  const labels = Object.fromEntries((nets.ok ? nets.data.data : []).map((n) => [n.network, n.label]));
  const label = (key) => labels[key] || key;
  const counts = h(
    "ul",
    { class: "counts", "aria-label": "Posts by status" },
    STATUSES.map((s) => h("li", {}, h("a", { href: `${ADMIN}/social/posts?status=${s}` }, h("strong", {}, String(data.counts[s] || 0)), ` ${s}`))),
  );
  const fix = (a) =>
    can("social.manage")
      ? h("a", { href: `${ADMIN}/social/settings#account-${a.id}` }, `Reconnect ${label(a.network)} @${a.handle}`)
      : h("span", { class: "muted" }, "An admin reconnects it under Networks and accounts.");
  const attention = data.attention.length
    ? h(
        "ul",
        { class: "attention-list" },
        data.attention.map((a) => h("li", {}, h("strong", {}, `${label(a.network)} @${a.handle}`), ` needs attention since ${when(a.attentionSince)}: ${a.attention} `, fix(a))),
      )
    : h("p", { class: "ok" }, "Every connection works.");
  replace(
    root,
    socialNav(""),
    notice,
    can("social.write") ? h("div", { class: "actions" }, h("a", { class: "button-link", href: `${ADMIN}/social/posts/new` }, "New post")) : null,
    h("section", { class: "card", "aria-labelledby": "o-counts" }, h("h2", { id: "o-counts" }, "Posts"), counts),
    h(
      "section",
      { class: "card", "aria-labelledby": "o-when" },
      h("h2", { id: "o-when" }, "Next and last"),
      h(
        "dl",
        { class: "facts" },
        h("dt", {}, "Next scheduled"),
        h("dd", {}, data.next ? h("a", { href: postHref(data.next.id) }, when(data.next.at)) : "Nothing scheduled"),
        h("dt", {}, "Last sent"),
        h("dd", {}, data.last ? h("a", { href: postHref(data.last.id) }, when(data.last.at)) : "Nothing sent yet"),
      ),
    ),
    h("section", { class: `card${data.attention.length ? " attention" : ""}`, "aria-labelledby": "o-attention" }, h("h2", { id: "o-attention" }, "Connections needing attention"), attention),
  );
}
