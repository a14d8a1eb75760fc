// Site settings: title, tagline, description, logo and social image (media ids).
import "../lib/shell.js";
import { api, can, messageOf } from "../lib/api.js";
import { announce, h, replace, screenRoot } from "../lib/dom.js";
import { FieldSet } from "../fields/index.js";
import { alertBox } from "../lib/dom.js";
import { Problems } from "../lib/problems.js";
import { SETTINGS_FIELDS, settingsBody } from "../lib/site-settings.js";

const root = screenRoot();
const { ok, data } = await api("GET", "/settings");
if (!ok) {
  replace(root, h("p", { class: "alert", role: "alert" }, messageOf(data)));
} else {
  const fields = new FieldSet(SETTINGS_FIELDS, data);
  const box = alertBox();
  const problems = new Problems(box, (key) => fields.locate(key));
  const status = h("p", { class: "status", role: "status" });
  const editable = can("settings.manage");
  const form = h("form", { class: "card", novalidate: true, "aria-label": "Site settings" }, box, fields.els, editable ? h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Save the settings"), status) : h("p", { class: "muted" }, "Only admins change the settings."));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const { values } = fields.collect();
    const result = await api("PATCH", "/settings", settingsBody(values));
    if (!result.ok) return problems.show(result.data);
    problems.clear();
    status.textContent = "Saved.";
    announce("The settings were saved");
  });
  replace(root, form);
}
