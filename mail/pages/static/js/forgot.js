import { api, fields, finish, onSubmit, showError } from "./common.js";

const form = document.getElementById("forgot");
onSubmit(form, async () => {
  const { ok, data } = await api("POST", "/api/auth/password/forgot", fields(form, ["email"]));
  if (!ok) return showError(form, data);
  finish(form, data.message);
});
