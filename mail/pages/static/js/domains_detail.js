// A domain's page: check now, provider detection and publish, DKIM keys,
// fallback, settings, delete. Each change goes through /api/domains/:id...;
// the parts it changes are then re-read from the server (refreshRegions).

import { api, clearError, messageOf, onSubmit, showError, say } from "./common.js";
import { announce, quotaBytes, refreshRegions } from "./domains_shared.js";

const root = document.getElementById("domain");
const base = `/api/domains/${root.dataset.id}`;

function verifiedCount(set) {
  const good = set.records.filter((r) => r.status === "verified").length;
  return `${good} of ${set.records.length} records verified`;
}

// Check now: the record set comes back with each record's status.
const check = document.getElementById("dns-check");
const checkError = document.getElementById("dns-error");
onSubmit(check, async () => {
  checkError.textContent = "";
  announce("dns-status", "Looking up the records…");
  const { ok, data } = await api("POST", `${base}/check`, {});
  if (!ok) {
    document.getElementById("dns-status").textContent = "";
    say(checkError, data);
    return;
  }
  await refreshRegions("summary", "dns");
  announce("dns-status", `Checked just now: ${verifiedCount(data)}.`);
});

// Copy a record's value (the buttons show only when this module runs).
document.documentElement.classList.add("scripted");
document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  try {
    await navigator.clipboard.writeText(button.dataset.copy);
    button.textContent = "Copied";
  } catch {
    button.textContent = "Copy failed: select the text";
  }
  setTimeout(() => (button.textContent = "Copy"), 2000);
});

// Provider detection: from the domain's nameservers, when the page opens.
const providerLine = document.getElementById("provider");
const providerSelect = document.getElementById("publish-provider");
(async () => {
  providerLine.textContent = "Looking up who hosts this domain's DNS…";
  const { ok, data } = await api("GET", `${base}/dns/provider`);
  if (!ok) {
    providerLine.textContent = `Could not look up the DNS host: ${messageOf(data)}`;
    return;
  }
  const servers = data.nameservers ? data.nameservers.join(", ") : null;
  const where = servers ? ` (nameservers ${servers})` : "";
  if (data.provider === "unknown") {
    providerLine.textContent = servers
      ? `The DNS host was not recognised${where}. Download the zone file, or publish the records by hand.`
      : "The domain's nameservers could not be looked up. Publish the records by hand or with a token below.";
  } else if (data.publish_supported) {
    providerLine.textContent = `DNS is hosted at ${data.name}${where}: the records can be published with an API token.`;
    providerSelect.value = data.provider;
  } else {
    providerLine.textContent = `DNS is hosted at ${data.name}${where}. Publishing there is not supported yet: download the zone file and import it.`;
  }
})();

// Publish: the token goes in this one request and leaves the page right after.
const publish = document.getElementById("dns-publish");
const result = document.getElementById("publish-result");
onSubmit(publish, async () => {
  const token = publish.elements.namedItem("api_token");
  const body = { api_token: token.value, provider: providerSelect.value };
  token.value = ""; // never kept in the page, whatever the answer
  result.hidden = true;
  const { ok, data } = await api("POST", `${base}/dns/publish`, body);
  body.api_token = "";
  if (!ok) return showError(publish, data, "api_token");
  result.replaceChildren(...publishSummary(data));
  result.hidden = false;
  result.focus();
});

function publishSummary(data) {
  const heading = document.createElement("p");
  heading.className = "status";
  heading.textContent =
    `Published in ${data.zone} at ${providerSelect.selectedOptions[0].textContent}: ${data.created.length} created, ` +
    `${data.already_present.length} already there, ${data.conflicting.length} with another value.`;
  const parts = [heading];
  for (const [label, records] of [
    ["Created", data.created],
    ["Left alone: another value is published", data.conflicting],
  ]) {
    if (!records.length) continue;
    const title = document.createElement("p");
    title.textContent = `${label}:`;
    const list = document.createElement("ul");
    list.className = "mono";
    for (const r of records) {
      const item = document.createElement("li");
      item.textContent = `${r.type} ${r.name}`;
      list.append(item);
    }
    parts.push(title, list);
  }
  const next = document.createElement("p");
  next.textContent = "DNS changes can take a few minutes to be seen: then use Check DNS now.";
  parts.push(next);
  return parts;
}

// DKIM keys: activate or delete a standby key, generate a new one.
document.addEventListener("click", async (event) => {
  const button = event.target.closest("#keys button[data-action]");
  if (!button) return;
  const selector = button.closest("tr").querySelector("th").textContent;
  const keyPath = `${base}/keys/${button.dataset.key}`;
  document.getElementById("keys-error").textContent = "";
  if (button.dataset.action === "delete" && !window.confirm(`Delete the key ${selector}?`)) return;
  button.disabled = true;
  const { ok, data } =
    button.dataset.action === "activate"
      ? await api("POST", `${keyPath}/activate`, {})
      : await api("DELETE", keyPath);
  if (!ok) {
    button.disabled = false;
    say(document.getElementById("keys-error"), data);
    return;
  }
  await refreshRegions("summary", "dns", "keys");
  announce(
    "keys-status",
    button.dataset.action === "activate"
      ? `${selector} now signs mail. Its DNS record must be published.`
      : `${selector} was deleted.`,
  );
});

const createKey = document.getElementById("key-create");
onSubmit(createKey, async () => {
  const algorithm = createKey.elements.namedItem("algorithm").value;
  const { ok, data } = await api("POST", `${base}/keys`, { algorithm });
  if (!ok) return showError(createKey, data);
  await refreshRegions("dns", "keys");
  announce("keys-status", `New standby key ${data.selector}: publish its record, then activate it.`);
});

// Fallback domain.
const fallback = document.getElementById("fallback-form");
onSubmit(fallback, async () => {
  const value = fallback.elements.namedItem("fallback_domain_id").value || null;
  const { ok, data } = await api("POST", `${base}/fallback`, { fallback_domain_id: value });
  if (!ok) return showError(fallback, data, "fallback_domain_id");
  await refreshRegions("summary");
  announce(
    "fallback-status",
    data.fallback_domain ? `Saved: unknown addresses go to ${data.fallback_domain.name}.` : "Saved: no fallback.",
  );
});

// Settings: description, DMARC policy, default quota.
const settings = document.getElementById("domain-settings");
onSubmit(settings, async () => {
  const quota = quotaBytes(settings.elements.namedItem("default_quota_bytes"));
  if (Number.isNaN(quota) || quota === "") {
    return showError(settings, { message: "default_quota_bytes must be a whole number of MiB (0 = unlimited)" }, "default_quota_bytes");
  }
  const body = {
    description: settings.elements.namedItem("description").value,
    dmarc_policy: settings.elements.namedItem("dmarc_policy").value,
    default_quota_bytes: quota,
  };
  const { ok, data } = await api("PATCH", base, body);
  if (!ok) return showError(settings, data);
  await refreshRegions("summary", "dns");
  announce("settings-status", "Saved. The DMARC record to publish follows the policy.");
});

// Delete: only once the name is typed.
const remove = document.getElementById("domain-delete");
onSubmit(remove, async () => {
  const confirm = remove.elements.namedItem("confirm");
  if (confirm.value.trim().toLowerCase() !== root.dataset.name) {
    return showError(remove, { message: `Type ${root.dataset.name} to delete it.` }, "confirm");
  }
  const { ok, data } = await api("DELETE", base);
  if (!ok) return showError(remove, data);
  window.location.assign("/domains");
});

// A field corrected after an error loses its error state as soon as it changes.
document.addEventListener("input", (event) => {
  const form = event.target.form;
  if (form && event.target.getAttribute("aria-invalid")) clearError(form);
});
