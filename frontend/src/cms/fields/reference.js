// Reference: a combobox searching entries of the target type; one entry, or an
// ordered list of them when the field is `multiple`. It stores entry ids, or
// slugs with `by: "slug"` (a visual definition's references store slugs).
import { api, query } from "../lib/api.js";
import { announce, button, h, replace, uid } from "../lib/dom.js";
import { labelOf } from "./basic.js";

// The chosen entry of a stored slug: the search matches titles and slugs.
async function bySlug(type, slug) {
  const { ok, data } = await api("GET", "/entries" + query({ type, search: slug, limit: 100 }));
  const found = ok ? data.data.find((e) => e.slug === slug) : null;
  return found ? { ok: true, data: found } : { ok: false };
}

export function reference(def, value) {
  const multiple = Boolean(def.multiple);
  const by = def.by === "slug" ? "slug" : "id";
  const id = uid("f");
  const listId = `${id}-results`;
  const chosen = [];
  const input = h("input", {
    id,
    type: "search",
    role: "combobox",
    autocomplete: "off",
    "aria-autocomplete": "list",
    "aria-expanded": "false",
    "aria-controls": listId,
    placeholder: `Search ${def.to || "entries"} by title`,
  });
  const results = h("ul", { id: listId, class: "results", role: "listbox", "aria-label": `${labelOf(def)}: matching entries`, hidden: true });
  const chips = h("ul", { class: "chips", "aria-label": `${labelOf(def)}: chosen` });
  const errorEl = h("p", { class: "field-error", id: `${id}-error`, hidden: true });
  const wrap = h(
    "div",
    { class: "field" },
    h("label", { for: id }, labelOf(def) + (def.required ? " (required)" : "")),
    h("p", { class: "help", id: `${id}-help` }, def.help || `Entries of the type “${def.to}”.`),
    chips,
    input,
    results,
    errorEl,
  );
  input.setAttribute("aria-describedby", `${id}-help`);
  const changed = () => wrap.dispatchEvent(new Event("input", { bubbles: true }));
  const renderChips = () => {
    replace(
      chips,
      chosen.map((entry) =>
        h("li", {}, entry.title || entry.slug || entry.id, button("×", () => {
          chosen.splice(chosen.indexOf(entry), 1);
          renderChips();
          changed();
          announce(`${entry.title} removed`);
          input.focus();
        }, { class: "link", "aria-label": `Remove ${entry.title}` })),
      ),
    );
    if (!chosen.length) chips.append(h("li", { class: "muted" }, "Nothing chosen."));
  };
  let options = [];
  let active = -1;
  const close = () => {
    shown = null;
    results.hidden = true;
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
    active = -1;
  };
  const highlight = (index) => {
    active = index;
    [...results.children].forEach((li, i) => li.setAttribute("aria-selected", String(i === index)));
    if (index >= 0) input.setAttribute("aria-activedescendant", results.children[index].id);
  };
  const choose = (entry) => {
    if (!multiple) chosen.splice(0, chosen.length);
    if (!chosen.some((e) => e.id === entry.id)) chosen.push(entry);
    renderChips();
    changed();
    close();
    input.value = "";
    announce(`${entry.title} chosen`);
  };
  let timer;
  let asked = 0;
  let shown = null; // the text whose results are on screen
  const search = async () => {
    const text = input.value.trim();
    if (text === shown && !results.hidden) return;
    const mine = ++asked;
    const { ok, data } = await api("GET", "/entries" + query({ type: def.to, search: text, limit: 10, sort: "title" }));
    if (mine !== asked || !ok) return;
    shown = text;
    options = data.data;
    replace(
      results,
      options.length
        ? options.map((entry, i) => {
            const li = h("li", { id: `${listId}-${i}`, role: "option", "aria-selected": "false" }, entry.title, h("span", { class: "muted" }, ` · ${entry.status}`));
            li.addEventListener("mousedown", (event) => {
              event.preventDefault();
              choose(entry);
            });
            return li;
          })
        : [h("li", { role: "option", "aria-disabled": "true", "aria-selected": "false" }, "No entry matches.")],
    );
    results.hidden = false;
    input.setAttribute("aria-expanded", "true");
    highlight(-1);
  };
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(search, 200);
  });
  input.addEventListener("focus", () => results.hidden && search());
  input.addEventListener("blur", () => setTimeout(close, 150));
  input.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown") {
      event.preventDefault();
      if (results.hidden) search();
      else highlight(Math.min(active + 1, options.length - 1));
    } else if (event.key === "ArrowUp") {
      event.preventDefault();
      highlight(Math.max(active - 1, 0));
    } else if (event.key === "Enter") {
      // Enter in the search box chooses; it never submits the entry.
      event.preventDefault();
      if (!results.hidden && active >= 0 && options[active]) choose(options[active]);
    } else if (event.key === "Escape") {
      close();
    }
  });
  const ids = multiple ? value || [] : value ? [value] : [];
  const read = (key) => (by === "slug" ? bySlug(def.to, key) : api("GET", `/entries/${encodeURIComponent(key)}`));
  Promise.all(ids.map(read)).then((found) => {
    found.forEach((r, i) => chosen.push(r.ok ? r.data : { [by]: ids[i], id: ids[i], title: `missing entry ${ids[i]}` }));
    renderChips();
  });
  renderChips();
  return {
    el: wrap,
    value: () => (multiple ? chosen.map((e) => e[by]) : chosen[0] ? chosen[0][by] : null),
    locate: () => ({ wrap, input, label: labelOf(def) }),
  };
}
