// One webhook: create (the secret shown once), edit, test, rotate, delete, its events.
import { api, clearError, onSubmit, showError } from "./common.js";
import { showEvents } from "./webhook_lists.js";

const form = document.getElementById("webhook-form");
const webhookId = form.dataset.webhookId;
const status = document.getElementById("webhook-status");

function chosenEvents() {
  return [...form.querySelectorAll('input[name="events"]:checked')].map((box) => box.value);
}

function body() {
  const out = { endpoint: form.elements.namedItem("endpoint").value.trim(), events: chosenEvents() };
  out.description = form.elements.namedItem("description").value.trim();
  const enabled = form.elements.namedItem("enabled");
  if (enabled) out.enabled = enabled.checked;
  return out;
}

// The one time a secret is readable: shown, focused, never stored by the page.
function showSecret(secret, next) {
  const box = document.getElementById("secret-box");
  document.getElementById("secret-value").textContent = secret;
  box.hidden = false;
  if (next) {
    document.getElementById("secret-continue").href = next;
    document.getElementById("secret-next").hidden = false;
  }
  box.focus();
}

function fill(hook) {
  document.getElementById("webhook-heading").textContent = hook.endpoint;
  form.elements.namedItem("endpoint").value = hook.endpoint;
  form.elements.namedItem("description").value = hook.description;
  for (const box of form.querySelectorAll('input[name="events"]')) box.checked = hook.events.includes(box.value);
  form.elements.namedItem("enabled").checked = hook.enabled;
  const help = document.getElementById("enabled-help");
  help.textContent = hook.disabled_reason === "failing" ? "Switched off after failing for days. Enable it once the receiver answers again." : "";
  document.getElementById("secret-hint").textContent = `${hook.secret_hint}…`;
  document.getElementById("failures").textContent = String(hook.consecutive_failures);
}

onSubmit(form, async () => {
  const sent = body();
  if (!sent.events.length) return showError(form, { message: "events: choose at least one" }, "events");
  if (!webhookId) {
    const { ok, data } = await api("POST", "/api/webhooks", sent);
    if (!ok) return showError(form, data);
    form.hidden = true;
    document.getElementById("webhook-heading").textContent = "Webhook created";
    showSecret(data.secret, `/webhooks/${data.id}`);
    return;
  }
  const { ok, data } = await api("PATCH", `/api/webhooks/${webhookId}`, sent);
  if (!ok) return showError(form, data);
  fill(data);
  status.textContent = "Saved.";
});

if (webhookId) {
  const read = await api("GET", `/api/webhooks/${webhookId}`);
  if (!read.ok) showError(form, read.data);
  else fill(read.data);

  const test = document.getElementById("test-form");
  onSubmit(test, async () => {
    const answer = document.getElementById("test-answer");
    answer.hidden = true;
    const type = test.elements.namedItem("type").value;
    const { ok, data } = await api("POST", `/api/webhooks/${webhookId}/test`, { type });
    if (!ok) return showError(test, data);
    const said = data.status ? `answered ${data.status} in ${data.duration_ms} ms` : data.error;
    const box = data.ok ? document.getElementById("test-status") : document.getElementById("test-error");
    box.textContent = `${data.ok ? "Delivered" : "Not delivered"}: the receiver ${data.status ? said : "could not be reached (" + said + ")"}.`;
    if (data.response) {
      answer.textContent = data.response;
      answer.hidden = false;
    }
  });

  const rotate = document.getElementById("rotate-form");
  onSubmit(rotate, async () => {
    if (!window.confirm("Rotate the secret? The current one stops working at once.")) return;
    const { ok, data } = await api("POST", `/api/webhooks/${webhookId}/rotate`, {});
    if (!ok) return showError(rotate, data);
    fill(data);
    showSecret(data.secret);
  });

  const remove = document.getElementById("delete-form");
  onSubmit(remove, async () => {
    if (!window.confirm("Delete this webhook and its event history?")) return;
    const { ok, data } = await api("DELETE", `/api/webhooks/${webhookId}`);
    if (!ok) return showError(remove, data);
    window.location.assign("/webhooks");
  });

  clearError(form);
  await showEvents(`/api/webhooks/${webhookId}/events`);
}
