// People and roles: invite (with a first password), change a role, remove.
// A move into or out of admin/owner asks for your own password again (API rule).
import "../lib/shell.js";
import { api, can, me, messageOf, query } from "../lib/api.js";
import { alertBox, announce, button, h, replace, screenRoot, showAlert } from "../lib/dom.js";
import { apiForm } from "../lib/forms.js";
import { cells, pager, table } from "../lib/table.js";

const ROLES = ["viewer", "author", "editor", "admin", "owner"];
const HIGH = new Set(["admin", "owner"]);
const rank = (role) => ROLES.indexOf(role);
const root = screenRoot();
const box = alertBox();
const note = h("p", { class: "status", role: "status" });
const list = h("div");
const pages = h("nav", { class: "pager", "aria-label": "Pages of people" });

const roleSelect = (value, attrs = {}) => h("select", attrs, ROLES.filter((r) => rank(r) <= rank(me.role)).map((r) => h("option", { value: r, selected: r === value }, r)));

async function load(page = 1) {
  const { ok, data } = await api("GET", "/users" + query({ page, limit: 50 }));
  if (!ok) return showAlert(box, h("p", {}, messageOf(data)));
  replace(
    list,
    table("People", ["Name", "Email", "Role", ""], data.data.map((u) => {
      const above = rank(u.role) > rank(me.role);
      const select = roleSelect(u.role, { "aria-label": `Role of ${u.name || u.email}`, disabled: above || u.id === me.id });
      const save = button("Change role", () => changeRole(u, select.value), { class: "small", "aria-label": `Change the role of ${u.name || u.email}`, disabled: above || u.id === me.id });
      const remove = button("Remove", async () => {
        if (!window.confirm(`Remove ${u.email}? Their entries stay.`)) return;
        const r = await api("DELETE", `/users/${u.id}`);
        if (!r.ok) return showAlert(box, h("p", {}, messageOf(r.data)));
        note.textContent = `${u.email} was removed.`;
        load(page);
      }, { class: "small danger", "aria-label": `Remove ${u.email}`, disabled: above || u.id === me.id });
      return cells(u.name || "—", u.email, above ? u.role : h("div", { class: "actions" }, select, save), remove);
    })),
  );
  pager(pages, data.meta, load, "people");
}

async function changeRole(user, role) {
  const body = { role };
  if (HIGH.has(role) !== HIGH.has(user.role) || (HIGH.has(role) && role !== user.role)) {
    const password = window.prompt(`Changing a role to or from ${HIGH.has(role) ? role : user.role} needs your password:`);
    if (password === null) return;
    body.currentPassword = password;
  }
  const r = await api("PATCH", `/users/${user.id}`, body);
  if (!r.ok) return showAlert(box, h("p", {}, messageOf(r.data)));
  box.hidden = true;
  note.textContent = `${user.email} is now ${role}.`;
  announce(note.textContent);
  load();
}

const invite = apiForm(
  {
    email: ["Email", h("input", { type: "email", autocomplete: "off" })],
    name: ["Name", h("input", { type: "text" })],
    role: ["Role", roleSelect("viewer")],
    password: ["First password", h("input", { type: "password", autocomplete: "new-password" }), "At least 8 characters; tell it to them, they change it."],
  },
  "Add the person",
  { "aria-labelledby": "invite-h" },
);
invite.form.prepend(h("h2", { id: "invite-h" }, "Add a person"));
invite.form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const value = (k) => invite.wraps[k].querySelector("input, select").value;
  const body = { email: value("email").trim(), role: value("role"), password: value("password") };
  if (value("name").trim()) body.name = value("name").trim();
  const { ok, data } = await api("POST", "/users", body);
  if (!ok) return invite.problems.show(data);
  invite.problems.clear();
  invite.form.reset();
  invite.status.textContent = `${data.email} was added as ${data.role}.`;
  load();
});

replace(root, note, box, list, pages, can("users.manage") ? invite.form : null);
load();
