import { api } from "./common.js";

// The provider confirms by its webhook, usually within seconds: poll the
// entitlement a little while, then say what is known.
const status = document.getElementById("return-status");
const start = await api("GET", "/api/entitlement");
const before = start.ok ? start.data.plan.id : "";

for (let i = 0; i < 10; i++) {
  const { ok, data } = await api("GET", "/api/entitlement");
  if (ok && (data.plan.id !== before || data.subscription.status === "active")) {
    status.textContent = `You are on the ${data.plan.name} plan.`;
    break;
  }
  status.textContent = "Checkout finished. Your plan changes as soon as the payment provider confirms it.";
  await new Promise((resolve) => setTimeout(resolve, 1500));
}
