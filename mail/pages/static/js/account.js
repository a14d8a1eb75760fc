// The account screen: each card is its own form, posting to its own API route.
import { api, fields, onSubmit, showError } from "./common.js";

const byId = (id) => document.getElementById(id);

// Says that a form's change went through, in its live status line.
function said(form, message) {
  form.querySelector(".status").textContent = message;
}

onSubmit(byId("profile"), async () => {
  const form = byId("profile");
  const { ok, data } = await api("PATCH", "/api/account", { name: form.elements.namedItem("name").value });
  if (!ok) return showError(form, data);
  form.elements.namedItem("name").value = data.name;
  said(form, "Saved.");
});

onSubmit(byId("email-change"), async () => {
  const form = byId("email-change");
  const { ok, data } = await api("POST", "/api/account/email", fields(form, ["email", "password"]));
  if (!ok) return showError(form, data);
  form.reset();
  said(form, `We sent a link to ${data.pending_email}. Your address changes when you follow it.`);
});

onSubmit(byId("password-change"), async () => {
  const form = byId("password-change");
  const { ok, data } = await api("POST", "/api/account/password", fields(form, ["current_password", "new_password"]));
  // "password is incorrect" is about the current one.
  if (!ok) return showError(form, data, data.name === "forbidden" ? "current_password" : undefined);
  form.reset();
  said(form, "Password changed. Your other sessions were signed out.");
});

const disable = byId("totp-disable");
if (disable) {
  onSubmit(disable, async () => {
    const { ok, data } = await api("POST", "/api/auth/totp/disable", fields(disable, ["password"]));
    if (!ok) return showError(disable, data, "password");
    // The card's whole content depends on the state: read the page again.
    window.location.reload();
  });
}

onSubmit(byId("notifications"), async () => {
  const form = byId("notifications");
  const body = {};
  form.querySelectorAll("input[type=checkbox]").forEach((box) => (body[box.name] = box.checked));
  const { ok, data } = await api("PATCH", "/api/account/notifications", body);
  if (!ok) return showError(form, data);
  said(form, "Preferences saved.");
});

onSubmit(byId("delete-account"), async () => {
  const form = byId("delete-account");
  if (!window.confirm("Delete this account, its domains, addresses and all their mail?")) return;
  const { ok, data } = await api("DELETE", "/api/account", fields(form, ["password"]));
  if (!ok) return showError(form, data, "password");
  window.location.assign("/signin");
});
