// The inputs of the simple field types: native controls, labelled, with their error slot.
import { h, labelled, uid } from "../lib/dom.js";

export function labelOf(def) {
  return def.label || def.key;
}

export function optionList(def) {
  return (def.options || []).map((o) => (typeof o === "object" ? { value: o.value, label: o.label || o.value } : { value: o, label: o }));
}

// A widget: {el, value(), locate(parts) -> {wrap, input, label} | null}; text-like
// ones also set(text), which counts as an edit (the form hears "input").
export function single(def, input, read) {
  const wrap = labelled(labelOf(def) + (def.required ? " (required)" : ""), input, { help: def.help });
  return {
    el: wrap,
    value: read,
    locate: () => ({ wrap, input, label: labelOf(def) }),
  };
}

function typed(widget, input) {
  widget.set = (text) => {
    input.value = text;
    input.dispatchEvent(new Event("input", { bubbles: true }));
  };
  return widget;
}

function pad(n) {
  return String(n).padStart(2, "0");
}

// "2026-05-01T08:30:00Z" as the local "2026-05-01T10:30" a datetime-local input shows.
export function toLocalInput(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function fromLocalInput(text) {
  if (!text) return null;
  const d = new Date(text);
  return Number.isNaN(d.getTime()) ? text : d.toISOString();
}

export function zoneName() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "local time";
}

export const BASIC = {
  text(def, value) {
    const input = h("input", { type: "text", value: value ?? "", maxlength: def.maxLength });
    return typed(single(def, input, () => input.value), input);
  },
  textarea(def, value) {
    const input = h("textarea", { rows: 5, maxlength: def.maxLength }, value ?? "");
    return typed(single(def, input, () => input.value), input);
  },
  number(def, value) {
    const input = h("input", { type: "number", value: value ?? "", step: def.integer ? 1 : "any", min: def.min, max: def.max, inputmode: "decimal" });
    return single(def, input, () => (input.value === "" ? null : Number(input.value)));
  },
  boolean(def, value) {
    const input = h("input", { type: "checkbox", checked: Boolean(value), id: uid("f") });
    const errorEl = h("p", { class: "field-error", id: `${input.id}-error`, hidden: true });
    const help = def.help ? h("p", { class: "help" }, def.help) : null;
    const wrap = h("div", { class: "field" }, h("div", { class: "check" }, input, h("label", { for: input.id }, labelOf(def))), help, errorEl);
    return { el: wrap, value: () => input.checked, locate: () => ({ wrap, input, label: labelOf(def) }) };
  },
  date(def, value) {
    const input = h("input", { type: "date", value: value ?? "" });
    return single(def, input, () => input.value || null);
  },
  datetime(def, value) {
    const input = h("input", { type: "datetime-local", value: toLocalInput(value) });
    const widget = single({ ...def, help: [def.help, `In your time zone (${zoneName()}); stored in UTC.`].filter(Boolean).join(" ") }, input, () => fromLocalInput(input.value));
    return widget;
  },
  select(def, value) {
    const input = h(
      "select",
      {},
      h("option", { value: "" }, "— none —"),
      optionList(def).map((o) => h("option", { value: o.value, selected: o.value === value }, o.label)),
    );
    return single(def, input, () => input.value || null);
  },
  multiselect(def, value) {
    const chosen = new Set(value || []);
    const boxes = optionList(def).map((o) => {
      const box = h("input", { type: "checkbox", value: o.value, checked: chosen.has(o.value), id: uid("f") });
      return { box, row: h("div", { class: "check" }, box, h("label", { for: box.id }, o.label)) };
    });
    const errorEl = h("p", { class: "field-error", hidden: true });
    const legend = h("legend", {}, labelOf(def) + (def.required ? " (required)" : ""));
    const wrap = h("fieldset", { class: "field" }, legend, def.help ? h("p", { class: "help" }, def.help) : null, boxes.map((b) => b.row), errorEl);
    const first = boxes[0] ? boxes[0].box : legend;
    errorEl.id = `${first.id || uid("f")}-error`;
    return {
      el: wrap,
      value: () => boxes.filter((b) => b.box.checked).map((b) => b.box.value),
      locate: () => ({ wrap, input: first, label: labelOf(def) }),
    };
  },
  color(def, value) {
    const text = h("input", { type: "text", value: value ?? "", placeholder: "#1a73e8", spellcheck: "false", autocomplete: "off" });
    const swatch = h("input", { type: "color", value: /^#[0-9a-f]{6}$/i.test(value || "") ? value : "#000000", "aria-label": `${labelOf(def)}: colour picker`, tabindex: 0 });
    swatch.addEventListener("input", () => (text.value = swatch.value));
    text.addEventListener("input", () => {
      if (/^#[0-9a-f]{6}$/i.test(text.value)) swatch.value = text.value.toLowerCase();
    });
    const widget = single({ ...def, help: def.help || "A hex colour: #rgb, #rrggbb or with alpha." }, text, () => text.value.trim());
    widget.el.append(h("div", { class: "actions" }, swatch));
    return widget;
  },
  url(def, value) {
    const input = h("input", { type: "url", value: value ?? "", placeholder: "https://", inputmode: "url" });
    return single(def, input, () => input.value.trim());
  },
  email(def, value) {
    const input = h("input", { type: "email", value: value ?? "", autocomplete: "off" });
    return single(def, input, () => input.value.trim());
  },
};
