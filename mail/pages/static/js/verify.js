import { api, finish, onSubmit, showError } from "./common.js";

const form = document.getElementById("verify");
const token = new URLSearchParams(window.location.search).get("token") || "";
onSubmit(form, async () => {
  const { ok, data } = await api("POST", "/api/auth/verify", { token });
  if (!ok) return showError(form, data);
  finish(form, `${data.email} is confirmed.`);
});
