// The instance owner's OAuth apps: register (the secret shown once), edit
// redirect URIs and scopes, rotate the secret (shown once), revoke. Every
// change goes through the OAuth admin API (/admin/oauth/clients).
import { api, copyButton, onSubmit, showError, say } from "./common.js";
import { badge, button, cell, showRows, when } from "./sending.js";

const ADMIN = "/admin/oauth/clients";
const createForm = document.getElementById("create-client");
const editCard = document.getElementById("edit-card");
const editForm = document.getElementById("edit-client");
const secretBox = document.getElementById("secret-box");
const secretInput = document.getElementById("secret");
const copyStatus = document.getElementById("copy-status");
const table = document.getElementById("clients");
const listError = document.getElementById("clients-error");
const listStatus = document.getElementById("clients-status");

let scopes = [];
let editing = null;

// Redirect URIs are typed one per line; blank lines are not URIs.
function uris(text) {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
}

function scopeBoxes(container, prefix, checked) {
  const boxes = scopes.map((scope) => {
    const label = document.createElement("label");
    label.className = "check";
    const input = document.createElement("input");
    input.type = "checkbox";
    input.name = "scopes";
    input.value = scope;
    input.id = `${prefix}-scope-${scope.replaceAll(/[^a-z0-9]/gi, "-")}`;
    input.checked = checked.includes(scope);
    label.append(input, ` ${scope}`);
    return label;
  });
  container.replaceChildren(...boxes);
}

function chosenScopes(form) {
  return [...form.querySelectorAll('input[name="scopes"]:checked')].map((el) => el.value);
}

function showSecret(client) {
  secretInput.value = client.client_secret;
  document.getElementById("secret-client-id").textContent = client.client_id;
  copyStatus.textContent = "";
  secretBox.hidden = false;
  document.getElementById("secret-title").focus();
}

async function loadScopes() {
  const { ok, data } = await api("GET", "/.well-known/oauth-authorization-server/oauth");
  scopes = ok && Array.isArray(data.scopes_supported) ? data.scopes_supported : [];
  // A new app asks for the sign-in scopes by default; the owner adds more.
  scopeBoxes(
    document.getElementById("scopes"),
    "new",
    scopes.filter((s) => s === "openid" || s === "email"),
  );
}

async function load() {
  listError.textContent = "";
  const { ok, data } = await api("GET", ADMIN);
  if (!ok) {
    say(listError, data);
    return;
  }
  // Revoked apps stay listed (their tokens are gone), after the live ones.
  const clients = [...data.clients].sort(
    (a, b) => (a.revoked_at ? 1 : 0) - (b.revoked_at ? 1 : 0) || a.name.localeCompare(b.name),
  );
  const rows = clients.map((client) => {
    const row = document.createElement("tr");
    const name = cell(row, client.name, "th");
    name.scope = "row";
    const id = document.createElement("span");
    id.className = "mono sub";
    id.textContent = client.client_id;
    name.append(id);
    cell(row, client.revoked_at ? badge("revoked") : client.public ? "Public" : "Confidential");
    const list = document.createElement("ul");
    list.className = "plain mono";
    for (const uri of client.redirect_uris) {
      const item = document.createElement("li");
      item.textContent = uri;
      list.append(item);
    }
    cell(row, list);
    cell(row, client.allowed_scopes.join(" "));
    cell(row, when(client.created_at));
    const actions = document.createElement("div");
    actions.className = "row-actions stacked";
    if (!client.revoked_at) {
      actions.append(button("Edit", () => edit(client), `Edit ${client.name}`));
      if (!client.public) {
        actions.append(button("Rotate secret", () => rotate(client), `Rotate the secret of ${client.name}`));
      }
      actions.append(button("Revoke", () => revoke(client), `Revoke ${client.name}`));
    }
    cell(row, actions);
    return row;
  });
  showRows(table, document.getElementById("clients-empty"), rows);
}

function edit(client) {
  editing = client;
  editForm.elements.namedItem("name").value = client.name;
  editForm.elements.namedItem("description").value = client.description || "";
  editForm.elements.namedItem("redirect_uris").value = client.redirect_uris.join("\n");
  scopeBoxes(document.getElementById("edit-scopes"), "edit", client.allowed_scopes);
  document.getElementById("edit-title").textContent = `Edit ${client.name}`;
  editCard.hidden = false;
  document.getElementById("edit-title").focus();
}

function closeEdit() {
  editing = null;
  editCard.hidden = true;
}

async function rotate(client) {
  const question = `Rotate the secret of “${client.name}”? The old secret stops working at once and every refresh token of the app is revoked.`;
  if (!window.confirm(question)) return;
  const { ok, data } = await api("POST", `${ADMIN}/${client.id}/rotate-secret`);
  if (!ok) {
    say(listError, data);
    return;
  }
  showSecret(data);
  await load();
}

async function revoke(client) {
  const question = `Revoke “${client.name}”? It can no longer sign anyone in, and its refresh tokens stop working.`;
  if (!window.confirm(question)) return;
  const { ok, data } = await api("DELETE", `${ADMIN}/${client.id}`);
  if (!ok) say(listError, data);
  else listStatus.textContent = `${client.name} was revoked.`;
  if (editing && editing.id === client.id) closeEdit();
  await load();
}

onSubmit(createForm, async () => {
  const body = {
    name: createForm.elements.namedItem("name").value.trim(),
    redirect_uris: uris(createForm.elements.namedItem("redirect_uris").value),
    allowed_scopes: chosenScopes(createForm),
    public: createForm.elements.namedItem("kind").value === "public",
  };
  const description = createForm.elements.namedItem("description").value.trim();
  if (description) body.description = description;
  const { ok, data } = await api("POST", ADMIN, body);
  if (!ok) return showError(createForm, data, fieldOf(data));
  createForm.reset();
  await loadScopes();
  if (data.client_secret) showSecret(data);
  else {
    secretBox.hidden = true;
    listStatus.textContent = `${data.name} was registered with client id ${data.client_id}.`;
  }
  await load();
});

onSubmit(editForm, async () => {
  if (!editing) return;
  const body = {
    name: editForm.elements.namedItem("name").value.trim(),
    description: editForm.elements.namedItem("description").value.trim() || null,
    redirect_uris: uris(editForm.elements.namedItem("redirect_uris").value),
    allowed_scopes: chosenScopes(editForm),
  };
  const { ok, data } = await api("PATCH", `${ADMIN}/${editing.id}`, body);
  if (!ok) return showError(editForm, data, fieldOf(data));
  listStatus.textContent = `${data.name} was saved.`;
  closeEdit();
  await load();
});

// OAuth's errors name the field in their description ("redirect_uris[0]: ...").
function fieldOf(data) {
  const text = data.error_description || "";
  for (const name of ["redirect_uris", "name", "description"]) {
    if (text.startsWith(name)) return name;
  }
  return data.error === "invalid_redirect_uri" ? "redirect_uris" : undefined;
}

document.getElementById("edit-cancel").addEventListener("click", closeEdit);

copyButton(document.getElementById("copy"), secretInput, copyStatus);

await loadScopes();
await load();
