import { api, fields, finish, onSubmit, showError } from "./common.js";

const form = document.getElementById("reset");
const token = new URLSearchParams(window.location.search).get("token") || "";
onSubmit(form, async () => {
  const body = { token, ...fields(form, ["password"]) };
  const { ok, data } = await api("POST", "/api/auth/password/reset", body);
  if (!ok) return showError(form, data);
  finish(form, "Your password was changed. Sign in with it.");
});
