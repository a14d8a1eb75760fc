// Referrals: the link to share and how many came through it.
import { api, messageOf } from "./common.js";

const input = document.getElementById("referral-url");
const status = document.getElementById("copy-status");
const { ok, data } = await api("GET", "/api/account/referrals");
if (!ok) {
  document.getElementById("referrals-error").textContent = messageOf(data);
} else {
  input.value = data.url;
  document.getElementById("referral-code").textContent = data.code;
  document.getElementById("referral-signups").textContent = String(data.signups);
  document.getElementById("referral-verified").textContent = String(data.verified_signups);
}

document.getElementById("copy-link").addEventListener("click", async () => {
  input.select();
  try {
    await navigator.clipboard.writeText(input.value);
    status.textContent = "Copied.";
  } catch {
    // No clipboard permission (an insecure origin, say): the link stays selected.
    status.textContent = "Selected: press Ctrl+C (⌘C) to copy.";
  }
});
