// Menus: a named tree of links (an address, or an entry resolved on delivery),
// edited as a tree: add, nest (indent / outdent), reorder by drag or keyboard.
import "../lib/shell.js";
import Sortable from "sortablejs";
import { api, can, latest, messageOf } from "../lib/api.js";
import { alertBox, announce, button, h, labelled, replace, screenRoot, showAlert } from "../lib/dom.js";
import { apiForm } from "../lib/forms.js";
import { Problems } from "../lib/problems.js";

const MAX_DEPTH = 4;
const root = screenRoot();
const picker = h("select", { id: "menu-picker" });
const editorBox = h("div");
const box = alertBox();
const manage = can("menus.manage");

// The tree lives in plain objects {label, url, entryId, children}; the DOM is redrawn from it.
let tree = [];
let menu = null;

function itemPath(path) {
  return path.map((i, n) => (n === 0 ? `items.${i}` : `children.${i}`)).join(".");
}

function siblingsOf(path) {
  let list = tree;
  for (const i of path.slice(0, -1)) list = list[i].children;
  return list;
}

function draw(focusPath, focusName) {
  const fields = new Map();
  const render = (items, path) => {
    const ol = h("ol", { class: "tree" });
    items.forEach((item, i) => {
      const here = [...path, i];
      const position = here.map((n) => n + 1).join(".");
      let name = `${item.label || "link"} (${position})`;
      const named = [];
      const label = h("input", { type: "text", value: item.label || "" });
      const target = h("input", { type: "text", value: item.url || item.entryId || "", spellcheck: "false" });
      const kind = h("select", { "aria-label": `${name}: links to` }, h("option", { value: "url", selected: !item.entryId }, "an address"), h("option", { value: "entry", selected: Boolean(item.entryId) }, "an entry id"));
      label.addEventListener("input", () => {
        item.label = label.value;
        name = `${item.label || "link"} (${position})`;
        for (const [btn, text] of named) btn.setAttribute("aria-label", `${text}: ${name}`);
      });
      const setTarget = () => {
        delete item.url;
        delete item.entryId;
        if (kind.value === "entry") item.entryId = target.value.trim();
        else item.url = target.value.trim();
      };
      target.addEventListener("input", setTarget);
      kind.addEventListener("change", setTarget);
      const wraps = { label: labelled("Label", label), target: labelled("Address or entry id", target) };
      fields.set(itemPath(here), wraps);
      const act = (text, run, key) => {
        const btn = button(text, run, { class: "small", "aria-label": `${text}: ${name}`, dataset: { key: `${here.join("-")}-${key}` } });
        named.push([btn, text]);
        return btn;
      };
      const move = (delta) => {
        const list = siblingsOf(here);
        const to = i + delta;
        if (to < 0 || to >= list.length) return;
        list.splice(to, 0, list.splice(i, 1)[0]);
        draw([...path, to], delta < 0 ? "up" : "down");
        announce(`${item.label} moved to position ${to + 1}`);
      };
      const li = h(
        "li",
        { class: "item", dataset: { index: i } },
        h("div", { class: "row" }, wraps.label, h("div", { class: "field" }, h("span", { class: "label" }, "Links to"), kind), wraps.target),
        manage
          ? h(
              "div",
              { class: "actions" },
              h("button", { type: "button", class: "small handle", "aria-label": `Drag ${name}` }, "⇅ Drag"),
              act("Move up", () => move(-1), "up"),
              act("Move down", () => move(1), "down"),
              i > 0 && here.length < MAX_DEPTH ? act("Indent", () => {
                const list = siblingsOf(here);
                const [taken] = list.splice(i, 1);
                const parent = list[i - 1];
                parent.children = parent.children || [];
                parent.children.push(taken);
                draw([...path, i - 1, parent.children.length - 1], "outdent");
                announce(`${item.label} is now under ${parent.label}`);
              }, "indent") : null,
              path.length ? act("Outdent", () => {
                const list = siblingsOf(here);
                const [taken] = list.splice(i, 1);
                const parentList = siblingsOf(path);
                parentList.splice(path[path.length - 1] + 1, 0, taken);
                draw([...path.slice(0, -1), path[path.length - 1] + 1], "indent");
                announce(`${item.label} moved up a level`);
              }, "outdent") : null,
              here.length < MAX_DEPTH ? act("Add a sub-link", () => {
                item.children = item.children || [];
                item.children.push({ label: "", url: "" });
                draw([...here, item.children.length - 1], "label");
              }, "child") : null,
              act("Remove", () => {
                siblingsOf(here).splice(i, 1);
                draw();
                announce(`${item.label} removed`);
              }, "remove"),
            )
          : null,
        item.children && item.children.length ? render(item.children, here) : null,
      );
      li.dataset.focus = here.join("-");
      ol.append(li);
    });
    if (manage) {
      Sortable.create(ol, {
        handle: ".handle",
        onEnd: (event) => {
          if (event.oldIndex === event.newIndex) return;
          const list = path.length ? siblingsOf([...path, 0]) : tree;
          list.splice(event.newIndex, 0, list.splice(event.oldIndex, 1)[0]);
          draw();
        },
      });
    }
    return ol;
  };
  const form = h("form", { class: "card", novalidate: true, "aria-label": `Menu ${menu.name}` });
  const problemsBox = alertBox();
  problems = new Problems(problemsBox, (key) => {
    const exact = fields.get(key.replace(/\.(url|entryId)$/, ""));
    if (exact) return { wrap: /\.(url|entryId)$/.test(key) ? exact.target : exact.label, input: (/\.(url|entryId)$/.test(key) ? exact.target : exact.label).querySelector("input"), label: key };
    return key === "label" ? { wrap: menuLabel, input: menuLabel.querySelector("input"), label: "Menu label" } : null;
  });
  const menuLabelInput = h("input", { type: "text", value: menu.label || "" });
  menuLabelInput.addEventListener("input", () => (menu.label = menuLabelInput.value));
  const menuLabel = labelled("Menu label", menuLabelInput);
  const status = h("p", { class: "status", role: "status" });
  form.append(
    problemsBox,
    menuLabel,
    tree.length ? render(tree, []) : h("p", { class: "muted" }, "No links yet."),
    manage ? h("div", { class: "actions" }, button("Add a link", () => { tree.push({ label: "", url: "" }); draw([tree.length - 1], "label"); }), h("button", { type: "submit", class: "primary" }, "Save the menu"), status) : null,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { items: tree };
    if (menu.label) body.label = menu.label;
    const r = await api("PUT", `/menus/${menu.name}`, body);
    if (!r.ok) return problems.show(r.data);
    problems.clear();
    status.textContent = "Saved.";
    announce("The menu was saved");
  });
  replace(editorBox, form);
  if (focusPath) {
    const li = editorBox.querySelector(`li[data-focus="${focusPath.join("-")}"]`);
    const target = li && (focusName === "label" ? li.querySelector("input") : li.querySelector(`[data-key$="-${focusName}"]`) || li.querySelector("input"));
    if (target) target.focus();
  }
}
let problems;

async function loadMenus(select) {
  const { ok, data } = await api("GET", "/menus");
  if (!ok) return showAlert(box, h("p", {}, messageOf(data)));
  replace(picker, data.data.map((m) => h("option", { value: m.name, selected: m.name === select }, m.label || m.name)));
  if (!data.data.length) return replace(editorBox, h("p", { class: "muted" }, "No menus yet."));
  openMenu();
}

const fresh = latest();
async function openMenu() {
  const mine = fresh();
  const { ok, data } = await api("GET", `/menus/${picker.value}`);
  if (!mine()) return;
  if (!ok) return showAlert(box, h("p", {}, messageOf(data)));
  menu = data;
  tree = data.items;
  draw();
}

const create = apiForm({ name: ["Menu name", h("input", { type: "text", spellcheck: "false" }), "Lowercase, e.g. main or footer."], label: ["Label", h("input", { type: "text" })] }, "Create the menu", { "aria-labelledby": "menu-new" });
create.form.prepend(h("h2", { id: "menu-new" }, "New menu"));
create.form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const value = (k) => create.wraps[k].querySelector("input").value.trim();
  const body = { name: value("name"), items: [] };
  if (value("label")) body.label = value("label");
  const r = await api("POST", "/menus", body);
  if (!r.ok) return create.problems.show(r.data);
  create.form.reset();
  loadMenus(r.data.name);
});
picker.addEventListener("change", openMenu);
replace(root, box, h("div", { class: "toolbar" }, labelled("Menu", picker)), editorBox, manage ? create.form : null);
loadMenus();
