// The public recovery page: ask for a link, or, arriving from it, set the new password.
import { api, fields, finish, onSubmit, showError } from "./common.js";

const token = new URLSearchParams(window.location.search).get("token") || "";
const ask = document.getElementById("recover-request");
const reset = document.getElementById("recover-reset");

if (token) {
  ask.hidden = true;
  reset.hidden = false;
  onSubmit(reset, async () => {
    const { ok, data } = await api("POST", "/api/recover/reset", { token, ...fields(reset, ["password"]) });
    if (!ok) return showError(reset, data);
    finish(reset, `The password of ${data.email} is set. Sign in to your mail with it.`);
  });
} else {
  onSubmit(ask, async () => {
    const { ok, data } = await api("POST", "/api/recover/request", fields(ask, ["email"]));
    if (!ok) return showError(ask, data);
    finish(ask, data.message);
  });
}
