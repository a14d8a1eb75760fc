import { api, onSubmit } from "./common.js";

const form = document.getElementById("verify-send");
if (form) {
  onSubmit(form, async () => {
    const { ok, data } = await api("POST", "/api/auth/verify/send", {});
    const status = form.querySelector(".status");
    if (ok) status.textContent = "Sent. Check your inbox.";
    else status.textContent = data.message || "Could not send it.";
  });
}

