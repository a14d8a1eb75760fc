// Webhooks: create (the signing secret shown once), enable or disable,
// delete, and each one's delivery attempts.
import "../lib/shell.js";
import { api, messageOf, query } from "../lib/api.js";
import { announce, button, h, replace, screenRoot, when } from "../lib/dom.js";
import { apiForm, showOnce } from "../lib/forms.js";
import { cells, focusRows, pager, table } from "../lib/table.js";

const EVENTS = ["entry.created", "entry.updated", "entry.published", "entry.unpublished", "entry.drafted", "entry.scheduled", "entry.deleted", "entry.restored", "entry.purged"];
const root = screenRoot();
const list = h("div");
const once = h("div");
const attempts = h("section", { "aria-live": "polite" });
const events = h("fieldset", { class: "field" }, h("legend", {}, "Events (none ticked: all of them)"));
const boxes = EVENTS.map((e) => {
  const box = h("input", { type: "checkbox", value: e, id: `event-${e}` });
  events.append(h("div", { class: "check" }, box, h("label", { for: box.id }, e)));
  return box;
});
const create = apiForm(
  { name: ["Name", h("input", { type: "text" })], url: ["Endpoint URL", h("input", { type: "url", placeholder: "https://" })] },
  "Create the webhook",
  { "aria-labelledby": "webhook-new" },
);
create.wraps.url.after(events);
create.form.prepend(h("h2", { id: "webhook-new" }, "New webhook"));
create.form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const value = (k) => create.wraps[k].querySelector("input").value.trim();
  const { ok, data } = await api("POST", "/webhooks", { name: value("name"), url: value("url"), events: boxes.filter((b) => b.checked).map((b) => b.value) });
  if (!ok) return create.problems.show(data);
  create.problems.clear();
  create.form.reset();
  showOnce(once, "signing secret", data.secret);
  load();
});

// Paged as every list is: a busy webhook has hundreds of attempts.
async function showAttempts(hook, page = 1) {
  const { ok, data } = await api("GET", `/webhooks/${hook.id}/attempts` + query({ page, limit: 20 }));
  if (!ok) return replace(attempts, h("p", {}, messageOf(data)));
  const pages = h("nav", { class: "pager", "aria-label": `Pages of attempts of ${hook.name}` });
  replace(
    attempts,
    h("h2", {}, `Attempts of ${hook.name}`),
    data.data.length
      ? table(`Attempts of ${hook.name}`, ["When", "Event", "Answer", "Took"], data.data.map((a) => cells(when(a.at || a.createdAt), a.event || a.type || "", a.ok ? `${a.status} ok` : `${a.status || ""} ${a.error || "failed"}`, a.durationMs !== undefined ? `${a.durationMs} ms` : "")))
      : h("p", { class: "muted" }, "No delivery attempted yet."),
    data.meta.total ? pages : null,
  );
  pager(pages, data.meta, (n) => showAttempts(hook, n).then(() => focusRows(attempts)), "attempts");
}

async function load() {
  const { ok, data } = await api("GET", "/webhooks");
  if (!ok) return replace(list, h("p", { class: "alert", role: "alert" }, messageOf(data)));
  replace(
    list,
    data.data.length
      ? table("Webhooks", ["Name", "URL", "Events", "Secret", ""], data.data.map((w) =>
          cells(w.name, w.url, w.events.length ? w.events.join(", ") : "all", h("code", {}, `${w.secretHint}…`),
            h("div", { class: "actions" },
              button(w.enabled ? "Disable" : "Enable", async () => {
                await api("PATCH", `/webhooks/${w.id}`, { enabled: !w.enabled });
                announce(`${w.name} ${w.enabled ? "disabled" : "enabled"}`);
                load();
              }, { class: "small", "aria-label": `${w.enabled ? "Disable" : "Enable"} ${w.name}` }),
              button("Attempts", () => showAttempts(w), { class: "small", "aria-label": `Attempts of ${w.name}` }),
              button("Delete", async () => {
                if (!window.confirm(`Delete the webhook ${w.name}?`)) return;
                await api("DELETE", `/webhooks/${w.id}`);
                load();
              }, { class: "small danger", "aria-label": `Delete ${w.name}` })))))
      : h("p", { class: "muted" }, "No webhooks yet."),
  );
}
replace(root, once, list, attempts, create.form);
load();
