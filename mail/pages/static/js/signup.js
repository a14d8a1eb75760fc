import { api, fields, goNext, onSubmit, showError } from "./common.js";

const form = document.getElementById("signup");

const status = await api("GET", "/api/auth/signups");
if (status.ok && status.data.first_account) {
  document.getElementById("signup-note").hidden = false;
}

onSubmit(form, async () => {
  const { ok, data } = await api("POST", "/api/auth/signup", fields(form, ["name", "email", "password"]));
  if (ok) return goNext(form);
  showError(form, data);
});
