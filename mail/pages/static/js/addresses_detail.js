// An address's page: password, recovery address, name and quota, delete.
// Each form drives its /api/addresses/:id route; the summary is then re-read
// from the server. Folders and activity are the server's (activity pages by link).

import { api, onSubmit, showError } from "./common.js";
import { announce, quotaBytes, refreshRegions } from "./domains_shared.js";

const root = document.getElementById("address");
const base = `/api/addresses/${root.dataset.id}`;

const password = document.getElementById("address-password");
onSubmit(password, async () => {
  const field = password.elements.namedItem("password");
  const { ok, data } = await api("POST", `${base}/password`, { password: field.value });
  if (!ok) return showError(password, data, "password");
  field.value = "";
  announce("password-status", "Password set. Mail apps sign in with the new one.");
});

const recovery = document.getElementById("address-recovery");
onSubmit(recovery, async () => {
  const value = recovery.elements.namedItem("recovery_email").value.trim();
  const { ok, data } = await api("POST", `${base}/recovery`, { recovery_email: value || null });
  if (!ok) return showError(recovery, data, "recovery_email");
  await refreshRegions("summary");
  recovery.elements.namedItem("recovery_email").value = data.recovery_email || "";
  announce(
    "recovery-status",
    data.recovery_email ? `Resets go to ${data.recovery_email}.` : "Recovery address removed.",
  );
});

const details = document.getElementById("address-details");
onSubmit(details, async () => {
  const quota = quotaBytes(details.elements.namedItem("quota_bytes"));
  if (Number.isNaN(quota) || quota === "") {
    return showError(details, { message: "quota_bytes must be a whole number of MiB (0 = unlimited)" }, "quota_bytes");
  }
  const body = { display_name: details.elements.namedItem("display_name").value, quota_bytes: quota };
  const { ok, data } = await api("PATCH", base, body);
  if (!ok) return showError(details, data);
  await refreshRegions("summary");
  announce("details-status", "Saved.");
});

const remove = document.getElementById("address-delete");
onSubmit(remove, async () => {
  const confirm = remove.elements.namedItem("confirm");
  if (confirm.value.trim().toLowerCase() !== root.dataset.email) {
    return showError(remove, { message: `Type ${root.dataset.email} to delete it.` }, "confirm");
  }
  const { ok, data } = await api("DELETE", base);
  if (!ok) return showError(remove, data);
  window.location.assign(`/domains/${root.dataset.domain}/addresses`);
});
