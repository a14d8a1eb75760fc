// Design surfaces: the parts of the site an admin restyles without code
// (GET /api/design), each property's override changed (PATCH with only the
// changed properties; an emptied one is sent as null and loses its override),
// one override removed, or all of a surface's removed (DELETE).
import "../lib/shell.js";
import { api, messageOf } from "../lib/api.js";
import { alertBox, announce, button, h, replace, screenRoot, showAlert } from "../lib/dom.js";
import { fieldForm } from "../lib/field-form.js";

const root = screenRoot();
const HELP = {
  color: "A hex colour (#abc, #1a2b3c).",
  font: "A font-family list, e.g. Georgia, serif.",
  spacing: "One to four lengths, e.g. 1rem or 8px 16px.",
};

function defOf(property) {
  const help = [property.description, HELP[property.type], property.default ? `Default: ${property.default}.` : "No default."].filter(Boolean).join(" ");
  const base = { key: property.key, label: property.label || property.key, help };
  if (property.options && property.options.length) return { ...base, type: "select", options: property.options };
  return { ...base, type: property.type === "color" ? "color" : "text", maxLength: 200 };
}

function card(surface) {
  const id = `surface-${surface.id.replace(/\./g, "-")}`;
  const el = h("section", { class: "card", "aria-labelledby": id, dataset: { surface: surface.id } });
  const box = alertBox();
  const redraw = (fresh, said) => {
    const next = card(fresh);
    el.replaceWith(next);
    announce(said);
    return next;
  };
  const values = Object.fromEntries(surface.properties.map((p) => [p.key, p.value ?? ""]));
  const { form } = fieldForm({
    defs: surface.properties.map(defOf),
    values,
    label: surface.label,
    submitLabel: `Save ${surface.label}`,
    save: (changed) => {
      const body = {};
      for (const [key, value] of Object.entries(changed)) body[key] = value === "" || value === null ? null : value;
      return api("PATCH", `/design/${surface.id}`, body);
    },
    saved: (fresh) => redraw(fresh, `${surface.label} saved`).querySelector("h2").focus(),
  });
  const overridden = surface.properties.filter((p) => p.value !== null);
  const removals = overridden.map((p) =>
    button(`Remove the ${p.label || p.key} override`, async () => {
      const result = await api("PATCH", `/design/${surface.id}`, { [p.key]: null });
      if (!result.ok) return showAlert(box, h("p", {}, messageOf(result.data)));
      redraw(result.data, `The ${p.label || p.key} override was removed`).querySelector("h2").focus();
    }, { class: "small" }),
  );
  const reset = overridden.length
    ? button(`Remove every override of ${surface.label}`, async () => {
        const result = await api("DELETE", `/design/${surface.id}`);
        if (!result.ok) return showAlert(box, h("p", {}, messageOf(result.data)));
        redraw(result.data, `${surface.label} is back to its defaults`).querySelector("h2").focus();
      }, { class: "small danger" })
    : null;
  el.append(
    h("h2", { id, tabindex: -1 }, surface.label),
    h("p", { class: "help" }, surface.description, ` Applies to ${surface.selector}; declared by ${surface.source === "host" ? "the site" : `the ${surface.source} plugin`}.`),
    box,
    h(
      "table",
      { class: "stack" },
      h("caption", { class: "visually-hidden" }, `${surface.label}: values in effect`),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Property"), h("th", { scope: "col" }, "Override"), h("th", { scope: "col" }, "In effect"))),
      h(
        "tbody",
        {},
        surface.properties.map((p) => h("tr", {}, h("td", { "data-label": "Property" }, p.label || p.key), h("td", { "data-label": "Override" }, p.value ?? "none"), h("td", { "data-label": "In effect" }, p.effective ?? "none"))),
      ),
    ),
    form,
    removals.length || reset ? h("div", { class: "actions" }, removals, reset) : null,
  );
  return el;
}

const { ok, data } = await api("GET", "/design");
if (!ok) replace(root, h("p", { class: "alert", role: "alert" }, messageOf(data)));
else if (!data.data.length) replace(root, h("p", { class: "muted" }, "The site declares no design surface."));
else replace(root, h("p", { class: "help" }, "Leave a property empty to use its default."), data.data.map(card));
