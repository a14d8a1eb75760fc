import { api, fields, onSubmit, showError, say } from "./common.js";
import { badge, button, cell, showRows, when } from "./sending.js";

const LIMIT_NAMES = {
  domains: "Domains",
  addresses: "Addresses",
  storage_bytes: "Storage",
  sends_per_month: "Emails sent this month",
  api_keys: "API keys",
  webhooks: "Webhooks",
};
const FEATURE_NAMES = {
  custom_domains: "Your own domains",
  api_sending: "Sending API",
  webhooks: "Webhooks",
  transfers: "Transfers",
  filters: "Filters",
  jmap_push: "Push to mail apps",
};

function money(amount, currency) {
  try {
    return new Intl.NumberFormat(undefined, { style: "currency", currency }).format(amount / 100);
  } catch {
    return `${(amount / 100).toFixed(2)} ${currency.toUpperCase()}`;
  }
}

function amountOf(name, value) {
  if (name !== "storage_bytes") return String(value);
  const units = ["B", "KB", "MB", "GB", "TB"];
  let n = value;
  let i = 0;
  while (n >= 1000 && i < units.length - 1) {
    n /= 1000;
    i++;
  }
  return `${Number.isInteger(n) ? n : n.toFixed(1)} ${units[i]}`;
}

let provider = "none";
let current = null;

async function loadEntitlement() {
  const { ok, data } = await api("GET", "/api/entitlement");
  if (!ok) return;
  current = data;
  const sub = data.subscription;
  document.getElementById("current-plan").textContent = data.plan.name;
  const state = document.getElementById("current-state");
  if (sub.status === "cancelled") state.textContent = `Cancelled: active until ${when(sub.current_period_end)}.`;
  else if (sub.status === "active" && sub.current_period_end) state.textContent = `Renews on ${when(sub.current_period_end)}.`;
  else if (sub.status === "past_due") state.textContent = "A payment failed: update your card to keep this plan.";
  else state.textContent = "";
  document.getElementById("cancel").hidden = !["active", "past_due"].includes(sub.status) || data.plan.default;
  const over = document.getElementById("over-note");
  over.hidden = data.over_limits.length === 0;
  over.textContent = over.hidden
    ? ""
    : `Over your plan's limits (${data.over_limits.map((n) => LIMIT_NAMES[n] || n).join(", ")}): nothing was deleted, but those are read-only until you remove some or upgrade.`;
  const list = document.getElementById("usage");
  list.replaceChildren(
    ...Object.entries(data.usage).map(([name, u]) => {
      const item = document.createElement("li");
      const id = `usage-${name}`;
      const label = document.createElement("label");
      label.htmlFor = id;
      label.textContent = LIMIT_NAMES[name] || name;
      const text = document.createElement("span");
      text.className = "usage-text";
      text.textContent = u.limit === null ? `${amountOf(name, u.used)} (no limit)` : `${amountOf(name, u.used)} of ${amountOf(name, u.limit)}`;
      const bar = document.createElement("progress");
      bar.id = id;
      bar.max = u.limit === null ? 1 : Math.max(u.limit, 1);
      bar.value = u.limit === null ? 0 : Math.min(u.used, bar.max);
      if (u.over) item.className = "over";
      item.append(label, text, bar);
      return item;
    }),
  );
}

async function loadPlans() {
  const { ok, data } = await api("GET", "/api/plans");
  const box = document.getElementById("plans");
  if (!ok) {
    say(document.getElementById("plans-error"), data);
    return;
  }
  box.replaceChildren(
    ...data.data.map((plan) => {
      const item = document.createElement("li");
      item.className = "plan card";
      const title = document.createElement("h3");
      title.textContent = plan.name;
      const price = document.createElement("p");
      price.className = "price";
      price.textContent = plan.price ? `${money(plan.price, plan.currency)} a ${plan.interval}` : "Free";
      const features = document.createElement("ul");
      for (const [name, on] of Object.entries(plan.features)) {
        if (!on) continue;
        const li = document.createElement("li");
        li.textContent = FEATURE_NAMES[name] || name;
        features.append(li);
      }
      item.append(title, price, features);
      if (current && current.plan.id === plan.id) {
        const mark = badge("current");
        item.append(mark);
      } else {
        item.append(button(plan.price ? "Subscribe" : "Switch", () => subscribe(plan), `Choose the ${plan.name} plan`));
      }
      return item;
    }),
  );
}

async function subscribe(plan) {
  const error = document.getElementById("plans-error");
  error.textContent = "";
  const { ok, data } = await api("POST", "/api/subscription", { plan_id: plan.id });
  if (!ok) {
    say(error, data);
    return;
  }
  if (data.url) {
    // The provider's hosted checkout; it comes back to /billing/return.
    window.location.assign(data.url);
    return;
  }
  await loadEntitlement();
  await loadPlans();
}

async function loadMethods() {
  const table = document.getElementById("methods");
  if (provider === "none") {
    document.getElementById("provider-none").hidden = false;
    document.getElementById("add-method").hidden = true;
  }
  const { ok, data } = await api("GET", "/api/billing/payment-methods");
  if (!ok) return;
  const rows = data.data.map((m) => {
    const row = document.createElement("tr");
    cell(row, `${m.brand} •••• ${m.last4}`, "th").scope = "row";
    cell(row, m.exp_month ? `${String(m.exp_month).padStart(2, "0")}/${m.exp_year}` : "—");
    cell(row, m.default ? "Default" : "");
    const actions = document.createElement("div");
    if (!m.default) actions.append(button("Make default", () => methodAction("POST", `/api/billing/payment-methods/${m.id}/default`), `Make ${m.brand} ${m.last4} the default`));
    actions.append(button("Remove", () => methodAction("DELETE", `/api/billing/payment-methods/${m.id}`, `Remove ${m.brand} ending ${m.last4}?`), `Remove ${m.brand} ${m.last4}`));
    cell(row, actions);
    return row;
  });
  showRows(table, document.getElementById("methods-empty"), rows);
}

async function methodAction(method, path, confirmText) {
  if (confirmText && !window.confirm(confirmText)) return;
  const { ok, data } = await api(method, path);
  const error = document.getElementById("methods-error");
  if (ok) error.textContent = "";
  else say(error, data);
  await loadMethods();
}

async function loadTransactions() {
  const { ok, data } = await api("GET", "/api/billing/transactions?per_page=25");
  if (!ok) return;
  const rows = data.data.map((t) => {
    const row = document.createElement("tr");
    cell(row, when(t.created_at), "th").scope = "row";
    cell(row, t.description);
    cell(row, money(t.amount, t.currency));
    cell(row, badge(t.status));
    if (t.hosted_url) {
      const link = document.createElement("a");
      link.href = t.hosted_url;
      link.rel = "noopener noreferrer";
      link.textContent = "Invoice";
      link.setAttribute("aria-label", `Invoice of ${when(t.created_at)}`);
      cell(row, link);
    } else cell(row, "");
    return row;
  });
  showRows(document.getElementById("transactions"), document.getElementById("transactions-empty"), rows);
}

async function loadTaxId() {
  const { ok, data } = await api("GET", "/api/billing/tax-id");
  if (!ok || !data.type) return;
  document.getElementById("tax-type").value = data.type;
  document.getElementById("tax-value").value = data.value;
}

document.getElementById("cancel").addEventListener("click", async () => {
  if (!window.confirm("Cancel your subscription? It stays active until the end of the period you paid for.")) return;
  const { ok, data } = await api("POST", "/api/subscription/cancel");
  const error = document.getElementById("cancel-error");
  if (ok) error.textContent = "";
  else say(error, data);
  await loadEntitlement();
});

document.getElementById("add-method").addEventListener("click", async () => {
  const { ok, data } = await api("POST", "/api/billing/checkout/setup");
  if (!ok) {
    say(document.getElementById("methods-error"), data);
    return;
  }
  window.location.assign(data.url);
});

const taxForm = document.getElementById("tax-form");
onSubmit(taxForm, async () => {
  const { ok, data } = await api("PUT", "/api/billing/tax-id", fields(taxForm, ["type", "value"]));
  if (!ok) return showError(taxForm, data, "value");
  document.getElementById("tax-value").value = data.value;
  document.getElementById("tax-status").textContent = "Saved.";
});

if (new URLSearchParams(window.location.search).get("checkout") === "cancelled") {
  document.getElementById("checkout-note").textContent = "Checkout was cancelled: nothing changed.";
}

const found = await api("GET", "/api/billing/provider");
provider = found.ok ? found.data.provider : "none";
await loadEntitlement();
await Promise.all([loadPlans(), loadMethods(), loadTransactions(), loadTaxId()]);
