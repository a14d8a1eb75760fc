// Agent keys (yours: password asked again, the key shown once) and, for
// admins, delivery keys (the websites' read-only keys, scoped to types).
import "../lib/shell.js";
import { api, can, messageOf } from "../lib/api.js";
import { announce, button, h, replace, screenRoot, when } from "../lib/dom.js";
import { apiForm, showOnce } from "../lib/forms.js";
import { cells, table } from "../lib/table.js";

const GRANTABLE = ["content.read", "content.write", "content.publish", "types.manage", "media.manage", "taxonomy.manage", "settings.manage", "menus.manage", "plugins.manage", "users.manage", "keys.manage", "webhooks.manage", "social.write", "social.publish", "social.manage"];
const root = screenRoot();

// --- agent keys ---------------------------------------------------------------
const agentList = h("div");
const agentOnce = h("div");
const grants = h("fieldset", { class: "field" }, h("legend", {}, "What the key may do"));
const grantBoxes = GRANTABLE.filter(can).map((p) => {
  const box = h("input", { type: "checkbox", value: p, id: `grant-${p}`, checked: p === "content.read" });
  grants.append(h("div", { class: "check" }, box, h("label", { for: box.id }, p)));
  return box;
});
const agent = apiForm(
  {
    name: ["Key name", h("input", { type: "text", maxlength: 100 })],
    expiresInDays: ["Days until it expires", h("input", { type: "number", min: 1, max: 365, value: 90 }), "From 1 to 365."],
    password: ["Your password", h("input", { type: "password", autocomplete: "current-password" }), "Asked again before a key is made."],
  },
  "Create the agent key",
  { "aria-labelledby": "agent-new" },
);
agent.wraps.name.after(grants);
agent.form.prepend(h("h3", { id: "agent-new" }, "New agent key"));
agent.form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const [name, days, password] = ["name", "expiresInDays", "password"].map((k) => agent.form.querySelector(`#${agent.wraps[k].querySelector("input").id}`));
  const body = { name: name.value.trim(), password: password.value, grants: grantBoxes.filter((b) => b.checked).map((b) => b.value) };
  if (days.value) body.expiresInDays = Number(days.value);
  const { ok, data } = await api("POST", "/agent-keys", body);
  password.value = "";
  if (!ok) return agent.problems.show(data);
  agent.problems.clear();
  name.value = "";
  showOnce(agentOnce, "agent key", data.key);
  loadAgent();
});

async function loadAgent() {
  const { ok, data } = await api("GET", "/agent-keys");
  if (!ok) return replace(agentList, h("p", {}, messageOf(data)));
  replace(
    agentList,
    data.data.length
      ? table("Your agent keys", ["Name", "Key", "Grants", "Expires", "Last used", ""], data.data.map((k) =>
          cells(k.name, h("code", {}, `${k.hint}…`), k.grants.join(", "), `${k.status === "active" ? "" : `${k.status} · `}${when(k.expiresAt)}`, when(k.lastUsedAt) || "never",
            k.status === "active" ? button("Revoke", async () => {
              if (!window.confirm(`Revoke the key ${k.name}? Programs using it stop at once.`)) return;
              await api("DELETE", `/agent-keys/${k.id}`);
              announce(`${k.name} revoked`);
              loadAgent();
            }, { class: "small danger", "aria-label": `Revoke ${k.name}` }) : "")))
      : h("p", { class: "muted" }, "You have no agent keys."),
  );
}

root.append(
  h("section", { "aria-labelledby": "agent-h" }, h("h2", { id: "agent-h" }, "Agent keys"), h("p", { class: "muted" }, "A key for a program acting as you (Authorization: Bearer svcagt_…); it can never do more than your role."), agentOnce, agentList, agent.form),
);
loadAgent();

// --- delivery keys ------------------------------------------------------------
if (can("keys.manage")) {
  const list = h("div");
  const once = h("div");
  const scopes = h("fieldset", { class: "field" }, h("legend", {}, "Types it may read"));
  const all = h("input", { type: "checkbox", id: "scope-all", value: "*", checked: true });
  scopes.append(h("div", { class: "check" }, all, h("label", { for: all.id }, "Every type")));
  const typeBoxes = [];
  api("GET", "/types").then(({ ok, data }) => {
    if (!ok) return;
    for (const t of data.data) {
      const box = h("input", { type: "checkbox", value: t.name, id: `scope-${t.name}` });
      typeBoxes.push(box);
      scopes.append(h("div", { class: "check" }, box, h("label", { for: box.id }, t.label || t.name)));
    }
  });
  const delivery = apiForm({ name: ["Website name", h("input", { type: "text", maxlength: 100 })] }, "Create the delivery key", { "aria-labelledby": "delivery-new" });
  delivery.wraps.name.after(scopes);
  delivery.form.prepend(h("h3", { id: "delivery-new" }, "New delivery key"));
  delivery.form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const name = delivery.wraps.name.querySelector("input");
    const types = all.checked ? ["*"] : typeBoxes.filter((b) => b.checked).map((b) => b.value);
    const { ok, data } = await api("POST", "/delivery-keys", { name: name.value.trim(), types });
    if (!ok) return delivery.problems.show(data);
    delivery.problems.clear();
    name.value = "";
    showOnce(once, "delivery key", data.key);
    load();
  });
  async function load() {
    const { ok, data } = await api("GET", "/delivery-keys");
    if (!ok) return replace(list, h("p", {}, messageOf(data)));
    replace(
      list,
      data.data.length
        ? table("Delivery keys", ["Name", "Key", "Types", "Status", ""], data.data.map((k) =>
            cells(k.name, h("code", {}, `${k.hint}…`), k.types.join(", "), k.status,
              k.status === "active" ? button("Revoke", async () => {
                if (!window.confirm(`Revoke ${k.name}? The website stops reading at once.`)) return;
                await api("DELETE", `/delivery-keys/${k.id}`);
                announce(`${k.name} revoked`);
                load();
              }, { class: "small danger", "aria-label": `Revoke ${k.name}` }) : "")))
        : h("p", { class: "muted" }, "No delivery keys yet."),
    );
  }
  root.append(h("section", { "aria-labelledby": "delivery-h" }, h("h2", { id: "delivery-h" }, "Delivery keys"), h("p", { class: "muted" }, "A website's read-only key for published content (X-Api-Key: svc_…)."), once, list, delivery.form));
  load();
}
