import { api, copyButton, fields, onSubmit, showError, say } from "./common.js";
import { button, cell, showRows, when } from "./sending.js";

const form = document.getElementById("create-key");
const permission = document.getElementById("permission");
const domainField = document.getElementById("domain-field");
const domainSelect = document.getElementById("domain_id");
const tokenBox = document.getElementById("token-box");
const tokenInput = document.getElementById("token");
const copyStatus = document.getElementById("copy-status");
const table = document.getElementById("keys");
const listError = document.getElementById("keys-error");

const PERMISSIONS = { full_access: "Full access", sending_access: "Sending access" };

async function loadDomains() {
  const { ok, data } = await api("GET", "/api/domains?per_page=100&sort=name&direction=asc");
  if (!ok) return;
  for (const domain of data.data) {
    const option = document.createElement("option");
    option.value = domain.id;
    option.textContent = domain.unicode_name || domain.name;
    domainSelect.append(option);
  }
}

async function load() {
  listError.textContent = "";
  const { ok, data } = await api("GET", "/api/api-keys?per_page=100");
  if (!ok) {
    say(listError, data);
    return;
  }
  const rows = data.data.map((key) => {
    const row = document.createElement("tr");
    cell(row, key.name, "th").scope = "row";
    cell(row, PERMISSIONS[key.permission] + (key.domain ? ` (${key.domain})` : ""));
    cell(row, `${key.token_prefix}…`).className = "mono";
    cell(row, when(key.created_at));
    cell(row, key.last_used_at ? when(key.last_used_at) : "Never");
    cell(row, button("Revoke", () => revoke(key), `Revoke ${key.name}`));
    return row;
  });
  showRows(table, document.getElementById("keys-empty"), rows);
}

async function revoke(key) {
  if (!window.confirm(`Revoke “${key.name}”? Applications using it stop sending at once.`)) return;
  const { ok, data } = await api("DELETE", `/api/api-keys/${key.id}`);
  if (!ok) say(listError, data);
  await load();
}

permission.addEventListener("change", () => {
  domainField.hidden = permission.value !== "sending_access";
});

onSubmit(form, async () => {
  const body = fields(form, ["name", "permission"]);
  if (permission.value === "sending_access" && domainSelect.value) body.domain_id = domainSelect.value;
  const { ok, data } = await api("POST", "/api/api-keys", body);
  if (!ok) return showError(form, data);
  form.reset();
  domainField.hidden = true;
  tokenInput.value = data.token;
  copyStatus.textContent = "";
  tokenBox.hidden = false;
  document.getElementById("token-title").focus();
  await load();
});

copyButton(document.getElementById("copy"), tokenInput, copyStatus);

loadDomains();
load();
