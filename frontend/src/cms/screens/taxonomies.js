// Taxonomies (categories and tags built in, more can be made) and their terms.
import "../lib/shell.js";
import { api, can, latest, messageOf } from "../lib/api.js";
import { alertBox, announce, button, h, labelled, replace, screenRoot, showAlert } from "../lib/dom.js";
import { apiForm } from "../lib/forms.js";
import { FIND_FROM, finder } from "../lib/finder.js";

const root = screenRoot();
const picker = h("select", { id: "taxonomy-picker" });
const termsBox = h("section", { "aria-labelledby": "terms-h" });
const box = alertBox();
const manage = can("taxonomy.manage");
let taxonomies = [];
let shown = null; // the taxonomy whose terms are drawn
const fresh = latest();

async function loadTaxonomies(select) {
  const { ok, data } = await api("GET", "/taxonomies");
  if (!ok) return showAlert(box, h("p", {}, messageOf(data)));
  taxonomies = data.data;
  replace(picker, taxonomies.map((t) => h("option", { value: t.slug, selected: t.slug === select }, `${t.name}${t.hierarchical ? " (nested)" : ""}`)));
  loadTerms();
}

function indent(terms) {
  const byParent = new Map();
  for (const t of terms) {
    const list = byParent.get(t.parentId || null) || [];
    list.push(t);
    byParent.set(t.parentId || null, list);
  }
  const out = [];
  const walk = (parent, depth) => (byParent.get(parent) || []).forEach((t) => (out.push([t, depth]), walk(t.id, depth + 1)));
  walk(null, 0);
  return out;
}

async function loadTerms() {
  const mine = fresh();
  const taxonomy = taxonomies.find((t) => t.slug === picker.value);
  if (!taxonomy) return replace(termsBox);
  const { ok, data } = await api("GET", `/taxonomies/${taxonomy.slug}/terms`);
  if (!mine()) return;
  shown = taxonomy.slug;
  if (!ok) return showAlert(box, h("p", {}, messageOf(data)));
  const terms = indent(data.data);
  const parent = h("select", {}, h("option", { value: "" }, "— top level —"), terms.map(([t, d]) => h("option", { value: t.id }, `${"— ".repeat(d)}${t.name}`)));
  const add = apiForm(
    Object.fromEntries([
      ["name", ["Term name", h("input", { type: "text" })]],
      ["slug", ["Slug", h("input", { type: "text", spellcheck: "false" }), "Left empty, it is made from the name."]],
      ["description", ["Description", h("input", { type: "text" })]],
      ...(taxonomy.hierarchical ? [["parentId", ["Parent", parent]]] : []),
    ]),
    "Add the term",
    { "aria-labelledby": "term-new" },
  );
  add.form.prepend(h("h3", { id: "term-new" }, `New term in ${taxonomy.name}`));
  add.form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {};
    for (const [key, wrap] of Object.entries(add.wraps)) {
      const value = wrap.querySelector("input, select").value.trim();
      if (value) body[key] = value;
    }
    const r = await api("POST", `/taxonomies/${taxonomy.slug}/terms`, body);
    if (!r.ok) return add.problems.show(r.data);
    announce(`${r.data.name} added`);
    loadTerms();
  });
  const items = terms.map(([t, depth]) =>
    h("li", { class: `depth-${Math.min(depth, 4)}` }, `${"— ".repeat(depth)}${t.name} `, h("code", {}, t.slug), " ",
      manage ? button("Delete", async () => {
        if (!window.confirm(`Delete the term ${t.name}? Entries filed under it are unfiled.`)) return;
        const r = await api("DELETE", `/taxonomies/${taxonomy.slug}/terms/${t.id}`);
        if (!r.ok) return showAlert(box, h("p", {}, messageOf(r.data)));
        announce(`${t.name} deleted`);
        loadTerms();
      }, { class: "small danger", "aria-label": `Delete the term ${t.name}` }) : null));
  replace(
    termsBox,
    h("h2", { id: "terms-h" }, `Terms of ${taxonomy.name}`),
    h("p", { class: "muted" }, terms.length === 1 ? "1 term." : `${terms.length} terms.`),
    items.length >= FIND_FROM ? finder(`Find a term of ${taxonomy.name}`, items) : null,
    terms.length ? h("ul", { class: "tree" }, items) : h("p", { class: "muted" }, "No terms yet."),
    manage ? add.form : null,
    manage && !taxonomy.builtin
      ? button(`Delete the taxonomy ${taxonomy.name}`, async () => {
          if (!window.confirm(`Delete ${taxonomy.name} and all its terms?`)) return;
          const r = await api("DELETE", `/taxonomies/${taxonomy.slug}`);
          if (!r.ok) return showAlert(box, h("p", {}, messageOf(r.data)));
          loadTaxonomies();
        }, { class: "danger" })
      : null,
  );
}

const create = apiForm(
  { name: ["Taxonomy name", h("input", { type: "text" })], hierarchical: ["Terms nest (like categories)", h("input", { type: "checkbox" })] },
  "Create the taxonomy",
  { "aria-labelledby": "taxonomy-new" },
);
create.form.prepend(h("h2", { id: "taxonomy-new" }, "New taxonomy"));
create.form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const name = create.wraps.name.querySelector("input").value.trim();
  const hierarchical = create.wraps.hierarchical.querySelector("input").checked;
  const r = await api("POST", "/taxonomies", { name, hierarchical });
  if (!r.ok) return create.problems.show(r.data);
  create.form.reset();
  loadTaxonomies(r.data.slug);
});

// Choosing the taxonomy already shown keeps a half-typed new term.
picker.addEventListener("change", () => picker.value !== shown && loadTerms());
replace(root, box, h("div", { class: "toolbar" }, labelled("Taxonomy", picker)), termsBox, manage ? create.form : null);
loadTaxonomies();
