import { api, onSubmit, say } from "./common.js";
import { loadOverview } from "./overview.js";

const form = document.getElementById("verify-send");
if (form) {
  onSubmit(form, async () => {
    const { ok, data } = await api("POST", "/api/auth/verify/send", {});
    const status = form.querySelector(".status");
    if (ok) status.textContent = "Sent. Check your inbox.";
    else say(status, data);
  });
}

// Everything the overview shows comes from GET /api/overview in one request
// (overview.js); only the filters count is read from its list's total.
const [overview, filters] = await Promise.all([loadOverview(), api("GET", "/api/filters?per_page=10")]);
if (filters.ok) document.getElementById("count-filters").textContent = String(filters.data.total);
else if (overview) say(document.getElementById("overview-error"), filters.data);
