import { api, fields, onSubmit, showError } from "./common.js";

const form = document.getElementById("forgot");
onSubmit(form, async () => {
  const { ok, data } = await api("POST", "/api/auth/password/forgot", fields(form, ["email"]));
  if (!ok) return showError(form, data);
  document.getElementById("forgot-status").textContent = data.message;
});
