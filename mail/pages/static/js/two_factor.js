// Two-factor enrolment: a fresh secret on arrival, its QR code (drawn by the
// server from the pending secret), then the first code confirms it.
import { api, finish, onSubmit, showError } from "./common.js";

const form = document.getElementById("totp-enable");

async function start() {
  const loading = document.getElementById("totp-loading");
  const { ok, data } = await api("POST", "/api/auth/totp/setup", {});
  if (!ok) {
    loading.hidden = true;
    return showError(form, data);
  }
  // Groups of four are easier to type; the apps ignore the spaces.
  document.getElementById("totp-secret").textContent = data.secret.match(/.{1,4}/g).join(" ");
  const image = document.getElementById("qr-image");
  // The query only defeats any cache: each setup draws a new secret.
  image.src = `/account/two-factor/qr.svg?${Date.now()}`;
  await image.decode().catch(() => {});
  loading.hidden = true;
  document.getElementById("totp-qr").hidden = false;
}

if (form) {
  onSubmit(form, async () => {
    const { ok, data } = await api("POST", "/api/auth/totp/enable", { code: form.elements.namedItem("code").value });
    if (!ok) return showError(form, data, "code");
    form.querySelectorAll(".steps").forEach((el) => (el.hidden = true));
    form.querySelector(".actions a").textContent = "Back to your account";
    finish(form, "Two-factor sign-in is on. Next time you sign in, have your app ready.");
  });
  await start();
}
