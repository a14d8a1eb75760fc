import { api, messageOf, onSubmit } from "./common.js";

const form = document.getElementById("verify-send");
if (form) {
  onSubmit(form, async () => {
    const { ok, data } = await api("POST", "/api/auth/verify/send", {});
    const status = form.querySelector(".status");
    if (ok) status.textContent = "Sent. Check your inbox.";
    else status.textContent = data.message || "Could not send it.";
  });
}

// What the overview counts, from the list routes' totals (their envelopes
// carry `total`). GET /api/overview (a later issue) replaces this function:
// one request answering the same numbers and more.
async function loadCounts() {
  const [domains, filters] = await Promise.all([
    api("GET", "/api/domains?per_page=100"),
    api("GET", "/api/filters?per_page=10"),
  ]);
  if (!domains.ok) return { error: domains.data };
  if (!filters.ok) return { error: filters.data };
  // Each domain carries its address_count; more than one page of domains is read page by page.
  let addresses = domains.data.data.reduce((sum, d) => sum + d.address_count, 0);
  for (let page = 2; page <= domains.data.pages; page++) {
    const more = await api("GET", `/api/domains?per_page=100&page=${page}`);
    if (!more.ok) return { error: more.data };
    addresses += more.data.data.reduce((sum, d) => sum + d.address_count, 0);
  }
  return { domains: domains.data.total, addresses, filters: filters.data.total };
}

const counts = await loadCounts();
if (counts.error) {
  document.getElementById("overview-error").textContent = messageOf(counts.error);
} else {
  for (const key of ["domains", "addresses", "filters"]) {
    document.getElementById(`count-${key}`).textContent = String(counts[key]);
  }
}
