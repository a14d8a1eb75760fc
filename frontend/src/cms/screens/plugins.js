// Plugins: every plugin the site has seen (GET /api/plugins), enabled or
// disabled with PATCH {enabled}, and a settings form built from the schema
// each declares (PATCH {settings}: only the keys changed; a refused value is
// marked on its input, from details.fields "settings.<key>").
import "../lib/shell.js";
import { api, messageOf } from "../lib/api.js";
import { alertBox, announce, button, h, replace, screenRoot, showAlert, when } from "../lib/dom.js";
import { fieldForm } from "../lib/field-form.js";

const root = screenRoot();
const STATUS = {
  active: "Active",
  inactive: "Disabled",
  paused: "Paused after an error",
  failed: "Failed to load",
  missing: "No longer installed",
};

// A declared setting as a field input (fields/basic.js).
function defOf(setting) {
  const base = { key: setting.key, label: setting.label || setting.key, help: setting.description || undefined };
  switch (setting.type) {
    case "integer":
      return { ...base, type: "number", integer: true, min: setting.minimum, max: setting.maximum };
    case "number":
      return { ...base, type: "number", min: setting.minimum, max: setting.maximum };
    case "boolean":
      return { ...base, type: "boolean" };
    case "select":
      return { ...base, type: "select", options: setting.options || [] };
    case "color":
      return { ...base, type: "color" };
    default:
      return { ...base, type: "text", maxLength: setting.maxLength };
  }
}

function card(plugin) {
  const id = `plugin-${plugin.name}`;
  const el = h("section", { class: "card", "aria-labelledby": id, dataset: { plugin: plugin.name } });
  const box = alertBox();
  const usable = plugin.status !== "failed" && plugin.status !== "missing";
  const toggle = button(plugin.enabled ? `Disable ${plugin.label}` : `Enable ${plugin.label}`, async () => {
    toggle.disabled = true;
    const result = await api("PATCH", `/plugins/${plugin.name}`, { enabled: !plugin.enabled });
    toggle.disabled = false;
    if (!result.ok) return showAlert(box, h("p", {}, messageOf(result.data)));
    announce(`${plugin.label} is ${result.data.enabled ? "enabled" : "disabled"}`);
    const fresh = card(result.data);
    el.replaceWith(fresh);
    fresh.querySelector("button").focus();
  }, { class: plugin.enabled ? "" : "primary", disabled: !usable && !plugin.enabled });
  el.append(
    h("h2", { id }, plugin.label, " ", h("span", { class: "muted" }, plugin.version)),
    h("p", {}, h("span", { class: `pill ${plugin.status}` }, STATUS[plugin.status] || plugin.status), " ", plugin.description),
    box,
  );
  if (plugin.error) {
    el.append(
      h(
        "div",
        { class: "alert" },
        h("p", {}, plugin.status === "paused" ? "Paused after this error (enable it again to resume):" : "Its last error:"),
        h("pre", { class: "secret" }, plugin.error.message),
        h("p", { class: "help" }, `${plugin.error.where}, ${when(plugin.error.at)}`),
      ),
    );
  }
  el.append(h("div", { class: "actions" }, toggle));
  const details = [];
  if (plugin.hooks.length) details.push(`Listens to ${plugin.hooks.join(", ")}.`);
  if (plugin.routes.length) details.push(`Routes: ${plugin.routes.map((r) => `${r.method} ${r.path}`).join(", ")}.`);
  if (plugin.surfaces.length) details.push(`Design surfaces: ${plugin.surfaces.join(", ")}.`);
  if (details.length) el.append(h("p", { class: "help" }, details.join(" ")));
  if (plugin.settingsSchema.length) {
    const heading = `${id}-settings`;
    const { form } = fieldForm({
      defs: plugin.settingsSchema.map(defOf),
      values: plugin.settings,
      label: `${plugin.label} settings`,
      submitLabel: `Save the ${plugin.label} settings`,
      editable: usable,
      keyOf: (key) => key.replace(/^settings\./, ""),
      save: (changed) => api("PATCH", `/plugins/${plugin.name}`, { settings: changed }),
    });
    el.append(h("h3", { id: heading }, "Settings"), form);
    if (!usable) el.append(h("p", { class: "muted" }, "A plugin that did not load cannot be configured."));
  }
  return el;
}

const { ok, data } = await api("GET", "/plugins");
if (!ok) replace(root, h("p", { class: "alert", role: "alert" }, messageOf(data)));
else if (!data.data.length) replace(root, h("p", { class: "muted" }, "No plugin is installed: plugins are Python files the operator puts in PLUGIN_DIR."));
else replace(root, data.data.map(card));
