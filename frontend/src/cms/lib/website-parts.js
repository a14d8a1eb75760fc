// The editors of the website manifest's shared parts (GET /api/website), each
// saving through its ordinary route with only what changed: a menu (a flat
// list of its top-level links; deeper levels are kept and edited on the Menus
// screen) by PUT /api/menus/:name, a single-kind entry's fields by
// PATCH /api/entries/:id (data only: a draft stays a draft), settings by
// PATCH /api/settings. Used by the website parts screen and the visual editor.
import { ADMIN, api, can } from "./api.js";
import { alertBox, announce, button, h, labelled, replace } from "./dom.js";
import { fieldForm } from "./field-form.js";
import { Problems } from "./problems.js";
import { moveButtons, moveInArray, reorderable } from "./reorder.js";
import { SETTINGS_FIELDS, settingsBody } from "./site-settings.js";

function menuPart(part, card, onSaved) {
  const value = part.value;
  const manage = can("menus.manage");
  // The top-level items as read: children and entry links go back untouched.
  const items = value.items.map((item) => ({ ...item }));
  const list = h("ol", { class: "links items", "aria-label": `${part.label}: links` });
  const box = alertBox();
  const wraps = [];
  const problems = new Problems(box, (key) => {
    const m = /^items\.(\d+)\.(label|url|entryId)$/.exec(key);
    const found = m && wraps[Number(m[1])];
    if (!found) return null;
    const which = m[2] === "label" ? found.label : found.target;
    return { wrap: which, input: which.querySelector("input"), label: `Link ${Number(m[1]) + 1} ${m[2]}` };
  });
  const status = h("p", { class: "status", role: "status" });
  const move = (from, to) => {
    moveInArray(items, from, to);
    draw(to);
  };
  function draw(focusIndex) {
    wraps.length = 0;
    replace(
      list,
      items.map((item, i) => {
        const name = item.label || `link ${i + 1}`;
        const label = h("input", { type: "text", value: item.label || "", readonly: !manage });
        label.addEventListener("input", () => (item.label = label.value));
        const address = h("input", { type: "text", value: item.url || "", spellcheck: "false", readonly: !manage || Boolean(item.entryId) });
        address.addEventListener("input", () => (item.url = address.value.trim()));
        const wrap = { label: labelled("Label", label), target: labelled(item.entryId ? "Links to the entry" : "Address", item.entryId ? h("input", { type: "text", value: item.entryId, readonly: true }) : address) };
        wraps.push(wrap);
        const moves = manage ? moveButtons(() => items.indexOf(item), () => items.length, move, (n) => items[n].label || `link ${n + 1}`) : null;
        if (moves) moves.label(name);
        return h(
          "li",
          { class: "item" },
          h("div", { class: "row" }, wrap.label, wrap.target),
          item.children && item.children.length ? h("p", { class: "help" }, `${item.children.length} nested link(s), kept as they are.`) : null,
          manage
            ? h("div", { class: "actions" }, moves.handle, moves.up, moves.down, button("Remove", () => {
                items.splice(i, 1);
                draw();
                announce(`${name} removed`);
              }, { class: "small", "aria-label": `Remove ${name}` }))
            : null,
        );
      }),
    );
    if (manage) reorderable(list, { onMove: move });
    if (focusIndex !== undefined) {
      const handle = list.children[focusIndex] && list.children[focusIndex].querySelector(".handle");
      if (handle && !list.contains(document.activeElement)) handle.focus();
    }
  }
  draw();
  const form = h("form", { novalidate: true, "aria-label": part.label }, box, list);
  if (!value.exists) form.prepend(h("p", { class: "notice" }, "This menu does not exist yet: these are the site's default links. Saving creates it."));
  if (value.nested) form.append(h("p", { class: "help" }, "This menu has nested links: they are kept. ", h("a", { href: `${ADMIN}/menus` }, "Edit them on the Menus screen"), "."));
  if (manage) {
    form.append(
      h("div", { class: "actions" }, button("Add a link", () => {
        items.push({ label: "", url: "" });
        draw();
        list.lastElementChild.querySelector("input").focus();
      }), h("button", { type: "submit", class: "primary" }, `Save ${part.label}`), status),
    );
  } else form.append(h("p", { class: "muted" }, "Editors and admins change menus."));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { items };
    if (part.source.label) body.label = value.label || part.source.label;
    const result = await api("PUT", `/menus/${part.source.name}`, body);
    if (!result.ok) return problems.show(result.data);
    problems.clear();
    value.exists = true;
    status.textContent = result.status === 201 ? "Created and saved." : "Saved.";
    announce(`${part.label} saved`);
    onSaved();
  });
  card.append(form);
}

async function entryPart(part, card, onSaved) {
  const value = part.value;
  if (!value.entry) {
    card.append(h("p", { class: "muted" }, "Its entry does not exist yet. ", h("a", { href: `${ADMIN}/entries/new?type=${encodeURIComponent(part.source.type)}` }, "Create it"), "."));
    return;
  }
  const type = await api("GET", `/types/${part.source.type}`);
  const own = type.ok ? type.data.fields : [];
  const defs = part.source.fields.map((key) => (key === "title" ? { key, type: "text", label: "Title" } : own.find((f) => f.key === key) || { key, type: "text" }));
  if (value.entry.status !== "published") card.append(h("p", { class: "help" }, `This entry is ${value.entry.status === "draft" ? "a draft" : value.entry.status}: saving here keeps it so.`));
  const { form } = fieldForm({
    defs,
    values: value.fields,
    label: part.label,
    submitLabel: `Save ${part.label}`,
    editable: can("content.write"),
    save: (changed) => {
      const { title, ...data } = changed;
      const body = Object.keys(data).length ? { data } : {};
      if (title !== undefined) body.title = title;
      return api("PATCH", `/entries/${value.entry.id}`, body);
    },
    saved: onSaved,
  });
  card.append(form, h("p", {}, h("a", { href: `${ADMIN}/entries/${value.entry.id}` }, `Open ${part.label} in the entry editor`)));
}

function settingsPart(part, card, onSaved) {
  const defs = SETTINGS_FIELDS.filter((f) => part.source.fields.includes(f.key));
  const { form } = fieldForm({
    defs,
    values: part.value,
    label: part.label,
    submitLabel: `Save ${part.label}`,
    editable: can("settings.manage"),
    save: (changed) => api("PATCH", "/settings", settingsBody(changed)),
    saved: onSaved,
  });
  card.append(form);
  if (!can("settings.manage")) card.append(h("p", { class: "muted" }, "Only admins change the settings."));
}

// Appends the part's editor to card; onSaved() after each save.
export async function partEditor(part, card, onSaved = () => {}) {
  if (part.source.kind === "menu") menuPart(part, card, onSaved);
  else if (part.source.kind === "entry") await entryPart(part, card, onSaved);
  else settingsPart(part, card, onSaved);
}
