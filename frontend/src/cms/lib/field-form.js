// A form of field inputs (fields/index.js) that sends only what changed and
// marks each input the API names: the website parts, plugin settings and
// design surfaces share it.
import { FieldSet } from "../fields/index.js";
import { announce, alertBox, h } from "./dom.js";
import { Problems } from "./problems.js";

function same(a, b) {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

// save(changed) -> {ok, data}; keyOf(apiKey) maps an error key to a field key.
// Empty texts read as "" and an unset value as undefined: both mean "no value".
export function fieldForm({ defs, values, label, submitLabel, editable = true, save, keyOf = (k) => k, saved }) {
  let before = { ...values };
  const fields = new FieldSet(defs, values);
  const box = alertBox();
  const problems = new Problems(box, (key) => fields.locate(keyOf(key)));
  const status = h("p", { class: "status", role: "status" });
  const form = h("form", { novalidate: true, "aria-label": label }, box, fields.els);
  if (editable) form.append(h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, submitLabel), status));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    status.textContent = "";
    const { values: now, problems: own } = fields.collect();
    if (own.length) return problems.show({ error: "Nothing was saved", details: { fields: own } });
    const changed = {};
    for (const [key, value] of Object.entries(now)) {
      const old = before[key];
      if (same(value === "" ? null : value, old === "" ? null : old)) continue;
      changed[key] = value;
    }
    if (!Object.keys(changed).length) {
      problems.clear();
      status.textContent = "Nothing changed.";
      return;
    }
    const buttons = [...form.querySelectorAll("button")];
    buttons.forEach((b) => (b.disabled = true));
    const result = await save(changed);
    buttons.forEach((b) => (b.disabled = false));
    if (!result.ok) {
      problems.show(result.data);
      announce("Nothing was saved");
      return;
    }
    problems.clear();
    before = { ...before, ...now };
    status.textContent = "Saved.";
    announce(`${label}: saved`);
    if (saved) saved(result.data);
  });
  return { form, fields, problems, status };
}
