import { api, fields, onSubmit, showError, say } from "./common.js";
import { button, cell, showRows, when } from "./sending.js";

const form = document.getElementById("add-suppression");
const table = document.getElementById("suppressions");
const listError = document.getElementById("list-error");
const REASONS = { bounce: "Bounced", complaint: "Complaint", manual: "Added by hand" };

async function load() {
  listError.textContent = "";
  const { ok, data } = await api("GET", "/api/suppressions?per_page=100");
  if (!ok) {
    say(listError, data);
    return;
  }
  const rows = data.data.map((item) => {
    const row = document.createElement("tr");
    cell(row, item.email, "th").scope = "row";
    cell(row, REASONS[item.origin] || item.origin);
    cell(row, when(item.created_at));
    cell(row, button("Remove", () => remove(item), `Remove ${item.email}`));
    return row;
  });
  showRows(table, document.getElementById("list-empty"), rows);
}

async function remove(item) {
  const { ok, data } = await api("DELETE", `/api/suppressions/${item.id}`);
  if (!ok) say(listError, data);
  await load();
}

onSubmit(form, async () => {
  const { ok, data } = await api("POST", "/api/suppressions", fields(form, ["email"]));
  if (!ok) return showError(form, data, "email");
  form.reset();
  form.querySelector(".status").textContent = `${data.email} is suppressed.`;
  await load();
});

load();
