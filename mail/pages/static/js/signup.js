import { api, fields, goNext, onSubmit, showError } from "./common.js";

const form = document.getElementById("signup");

const status = await api("GET", "/api/auth/signups");
if (status.ok && status.data.first_account) {
  document.getElementById("signup-note").hidden = false;
}

onSubmit(form, async () => {
  const body = fields(form, ["name", "email", "password"]);
  // A referral link (/signup?ref=CODE, from the Referrals screen) credits whoever shared it.
  const ref = new URLSearchParams(window.location.search).get("ref");
  if (ref) body.referral_code = ref;
  const { ok, data } = await api("POST", "/api/auth/signup", body);
  if (ok) return goNext(form);
  showError(form, data);
});
