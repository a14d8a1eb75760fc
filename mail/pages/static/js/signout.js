import { api, onSubmit, showError } from "./common.js";

const form = document.getElementById("signout");
if (form) {
  onSubmit(form, async () => {
    const { ok, data } = await api("POST", "/api/auth/logout");
    if (ok || data.name === "unauthorized") return window.location.assign("/signin");
    showError(form, data);
  });
}
