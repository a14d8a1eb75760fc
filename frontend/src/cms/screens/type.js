// The field builder: a content type's fields, of the eighteen types, with
// their options; reorder by drag or keyboard; nested fields for lists.
import "../lib/shell.js";
import { ADMIN, api, messageOf } from "../lib/api.js";
import { alertBox, announce, button, h, labelled, replace, screenRoot, setTitle, uid } from "../lib/dom.js";
import { Problems } from "../lib/problems.js";
import { moveButtons, moveInArray, reorderable } from "../lib/reorder.js";

const page = document.body.dataset;
const root = screenRoot();
let fieldTypes = [];
let typeNames = [];

const NUMBER_OPTIONS = new Set(["minLength", "maxLength", "min", "max", "minItems", "maxItems"]);
const FLAG_OPTIONS = new Set(["integer", "multiple"]);
const OPTION_LABELS = {
  minLength: "Shortest length",
  maxLength: "Longest length",
  min: "Lowest value",
  max: "Highest value",
  integer: "Whole numbers only",
  options: "Choices",
  minItems: "Fewest items",
  maxItems: "Most items",
  to: "Entries of the type",
  multiple: "Several entries",
  fields: "Fields of each item",
};

// One field's row: {el, value(), locate(parts)}
function fieldRow(def, rows, owner) {
  const li = h("li", { class: "item" });
  const row = { li };
  const key = h("input", { type: "text", value: def.key || "", spellcheck: "false", autocomplete: "off", pattern: "[a-z][a-zA-Z0-9]*" });
  const label = h("input", { type: "text", value: def.label || "" });
  const typeSelect = h("select", {}, fieldTypes.map((t) => h("option", { value: t.type, selected: t.type === (def.type || "text") }, `${t.label} (${t.type})`)));
  const required = h("input", { type: "checkbox", checked: Boolean(def.required), id: uid("f") });
  const help = h("input", { type: "text", value: def.help || "" });
  const wraps = {
    key: labelled("Key", key, { help: "camelCase, e.g. heroImage" }),
    label: labelled("Label", label),
    type: labelled("Field type", typeSelect),
    help: labelled("Help text", help),
  };
  const requiredWrap = h("div", { class: "field" }, h("div", { class: "check" }, required, h("label", { for: required.id }, "Required")), h("p", { class: "field-error", id: `${required.id}-error`, hidden: true }));
  const optionsBox = h("div", { class: "row" });
  let optionInputs = {};
  let nested = null;
  const renderOptions = (values) => {
    optionInputs = {};
    nested = null;
    replace(optionsBox);
    const meta = fieldTypes.find((t) => t.type === typeSelect.value);
    for (const name of Object.keys((meta && meta.options) || {})) {
      if (name === "required") continue;
      const current = values[name];
      let input;
      if (name === "fields") {
        nested = fieldList(current || [], `${labelOf()} item fields`);
        optionsBox.append(h("div", { class: "nested" }, nested.el));
        continue;
      } else if (NUMBER_OPTIONS.has(name)) {
        input = h("input", { type: "number", value: current ?? "", step: 1 });
      } else if (FLAG_OPTIONS.has(name)) {
        input = h("input", { type: "checkbox", checked: Boolean(current), id: uid("f") });
        const wrap = h("div", { class: "field" }, h("div", { class: "check" }, input, h("label", { for: input.id }, OPTION_LABELS[name] || name)), h("p", { class: "field-error", id: `${input.id}-error`, hidden: true }));
        optionInputs[name] = { input, wrap };
        optionsBox.append(wrap);
        continue;
      } else if (name === "options") {
        const lines = (current || []).map((o) => (typeof o === "object" ? (o.label && o.label !== o.value ? `${o.value}|${o.label}` : o.value) : o));
        input = h("textarea", { rows: 4 }, lines.join("\n"));
        const wrap = labelled(OPTION_LABELS.options, input, { help: "One per line; value|Label to show another label." });
        optionInputs[name] = { input, wrap };
        optionsBox.append(wrap);
        continue;
      } else if (name === "to") {
        input = h("select", {}, h("option", { value: "" }, "— choose —"), typeNames.map((n) => h("option", { value: n, selected: n === current }, n)));
      } else {
        input = h("input", { type: "text", value: current ?? "" });
      }
      const wrap = labelled(OPTION_LABELS[name] || name, input);
      optionInputs[name] = { input, wrap };
      optionsBox.append(wrap);
    }
  };
  const labelOf = () => label.value.trim() || key.value.trim() || "new field";
  typeSelect.addEventListener("change", () => renderOptions({}));
  renderOptions(def);
  row.moves = moveButtons(() => rows.indexOf(row), () => rows.length, owner.move, (i) => `Field ${i + 1}`);
  row.title = h("span", { class: "grow" });
  row.remove = button("Remove", () => owner.remove(row), { class: "small danger" });
  const refreshTitle = () => {
    const index = rows.indexOf(row) + 1;
    row.title.textContent = `Field ${index}: ${labelOf()}`;
    row.moves.label(`field ${labelOf()}`);
    row.remove.setAttribute("aria-label", `Remove the field ${labelOf()}`);
  };
  row.refresh = refreshTitle;
  key.addEventListener("input", refreshTitle);
  label.addEventListener("input", refreshTitle);
  li.append(
    h("div", { class: "item-head" }, row.title, row.moves.handle, row.moves.up, row.moves.down, row.remove),
    h("div", { class: "row" }, wraps.key, wraps.label, wraps.type),
    h("div", { class: "row" }, wraps.help, requiredWrap),
    optionsBox,
  );
  row.value = () => {
    const out = { key: key.value.trim(), type: typeSelect.value };
    if (label.value.trim()) out.label = label.value.trim();
    if (required.checked) out.required = true;
    if (help.value.trim()) out.help = help.value.trim();
    for (const [name, { input }] of Object.entries(optionInputs)) {
      if (FLAG_OPTIONS.has(name)) {
        if (input.checked) out[name] = true;
      } else if (NUMBER_OPTIONS.has(name)) {
        if (input.value !== "") out[name] = Number(input.value);
      } else if (name === "options") {
        const lines = input.value.split("\n").map((l) => l.trim()).filter(Boolean);
        out.options = lines.map((l) => {
          const [value, ...rest] = l.split("|");
          return rest.length ? { value: value.trim(), label: rest.join("|").trim() } : value;
        });
      } else if (input.value !== "") {
        out[name] = input.value;
      }
    }
    if (nested) out.fields = nested.value();
    return out;
  };
  row.locate = (parts) => {
    const [name, ...rest] = parts;
    if (wraps[name]) return { wrap: wraps[name], input: wraps[name].querySelector("input, select"), label: `${row.title.textContent} › ${name}` };
    if (name === "required") return { wrap: requiredWrap, input: required, label: `${row.title.textContent} › required` };
    if (name === "fields" && nested) return nested.locate(rest);
    if (optionInputs[name]) return { wrap: optionInputs[name].wrap, input: optionInputs[name].input, label: `${row.title.textContent} › ${OPTION_LABELS[name] || name}` };
    return { wrap: wraps.key, input: key, label: row.title.textContent };
  };
  row.focus = () => key.focus();
  return row;
}

// An ordered list of field rows with its add button.
function fieldList(defs, legendText) {
  const rows = [];
  const container = h("ol", { class: "items" });
  const owner = {
    move(from, to, byKeyboard) {
      moveInArray(rows, from, to);
      if (byKeyboard) {
        const node = container.children[from];
        node.remove();
        container.insertBefore(node, container.children[to] || null);
      }
      rows.forEach((r) => r.refresh());
    },
    remove(row) {
      rows.splice(rows.indexOf(row), 1);
      row.li.remove();
      rows.forEach((r) => r.refresh());
      announce("Field removed");
      add.focus();
    },
  };
  const push = (def) => {
    const row = fieldRow(def, rows, owner);
    rows.push(row);
    container.append(row.li);
    rows.forEach((r) => r.refresh());
    return row;
  };
  const add = button("Add a field", () => {
    push({ type: "text" }).focus();
    announce(`Field ${rows.length} added`);
  });
  add.setAttribute("aria-label", `Add a field to ${legendText}`);
  defs.forEach(push);
  reorderable(container, { onMove: owner.move });
  const el = h("fieldset", { class: "field" }, h("legend", {}, legendText), container, h("div", { class: "actions" }, add));
  return {
    el,
    value: () => rows.map((r) => r.value()),
    locate: (parts) => {
      const row = rows[Number(parts[0])];
      return row ? row.locate(parts.slice(1)) : { wrap: el, input: add, label: legendText };
    },
  };
}

async function start() {
  const [types, metas] = await Promise.all([api("GET", "/types"), api("GET", "/field-types")]);
  fieldTypes = metas.ok ? metas.data.data : [];
  typeNames = types.ok ? types.data.data.map((t) => t.name) : [];
  let current = null;
  if (page.type) {
    const found = await api("GET", `/types/${encodeURIComponent(page.type)}`);
    if (!found.ok) return replace(root, h("p", { class: "alert", role: "alert" }, messageOf(found.data)));
    current = found.data;
    setTitle(`Content type: ${current.label || current.name}`);
  }
  const name = h("input", { type: "text", value: current ? current.name : "", readonly: Boolean(current), spellcheck: "false", autocomplete: "off" });
  const label = h("input", { type: "text", value: current ? current.label || "" : "" });
  const single = h("input", { type: "checkbox", checked: Boolean(current && current.single), id: uid("f") });
  const previewUrl = h("input", { type: "text", value: current ? current.previewUrl || "" : "", placeholder: "https://example.com/{slug}" });
  const wraps = {
    name: labelled("Name", name, { help: current ? "The name cannot change." : "Lowercase; used in addresses and key scopes, e.g. article." }),
    label: labelled("Label", label),
    previewUrl: labelled("Preview address", previewUrl, { help: "Placeholders: {slug}, {id}, {locale}, {type}." }),
  };
  const singleWrap = h("div", { class: "field" }, h("div", { class: "check" }, single, h("label", { for: single.id }, "Single entry (a page such as Home)")), h("p", { class: "field-error", id: `${single.id}-error`, hidden: true }));
  const fields = fieldList(current ? current.fields : [], "Fields");
  const box = alertBox();
  const problems = new Problems(box, (key) => {
    const [head, ...rest] = key.split(".");
    if (wraps[head]) return { wrap: wraps[head], input: wraps[head].querySelector("input"), label: head };
    if (head === "single") return { wrap: singleWrap, input: single, label: "Single entry" };
    if (head === "fields") return fields.locate(rest);
    return null;
  });
  const status = h("p", { class: "status", role: "status" });
  const form = h(
    "form",
    { class: "card", novalidate: true, "aria-label": "Content type" },
    box,
    h("div", { class: "row" }, wraps.name, wraps.label),
    wraps.previewUrl,
    singleWrap,
    fields.el,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, current ? "Save the type" : "Create the type"), status),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { label: label.value.trim() || null, fields: fields.value(), single: single.checked, previewUrl: previewUrl.value.trim() || null };
    const result = current
      ? await api("PATCH", `/types/${encodeURIComponent(current.name)}`, body)
      : await api("POST", "/types", { name: name.value.trim(), ...body });
    if (!result.ok) {
      problems.show(result.data);
      return;
    }
    problems.clear();
    if (!current) {
      location.assign(`${ADMIN}/types/${result.data.name}?created=1`);
      return;
    }
    status.textContent = "Saved.";
    announce("The type was saved");
  });
  const remove = current
    ? button("Delete this type", async () => {
        if (!window.confirm(`Delete the type ${current.name}?`)) return;
        const { ok, data } = await api("DELETE", `/types/${encodeURIComponent(current.name)}`);
        if (ok) location.assign(`${ADMIN}/types`);
        else problems.message(messageOf(data));
      }, { class: "danger" })
    : null;
  replace(root, form, current ? h("div", { class: "actions" }, h("a", { href: `${ADMIN}/entries?type=${current.name}` }, "Entries of this type"), h("a", { href: `${ADMIN}/entries/new?type=${current.name}` }, "New entry"), remove) : null);
  if (new URLSearchParams(location.search).has("created")) {
    status.textContent = "Created. Add entries of this type from Entries.";
    history.replaceState(null, "", location.pathname);
  }
}

start();
