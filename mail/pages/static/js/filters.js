// The filters list: per address (or all), searched by name, a page at a time.
import { api, say } from "./common.js";
import { el, showPager } from "./pager.js";

const query = new URLSearchParams(window.location.search);
const addressId = query.get("address_id") || "";
const search = query.get("search") || "";
const list = document.getElementById("filters-list");
const pager = document.getElementById("filters-pager");
const error = document.getElementById("filters-error");
const status = document.getElementById("filters-status");
// The account's addresses are in the page's picker (mail/pages/panel.py): no call per domain.
const addresses = new Map(
  [...document.getElementById("address").options].filter((o) => o.value).map((o) => [o.value, o.text]),
);
document.getElementById("search").value = search;

if (addressId) document.getElementById("new-filter").href = `/filters/new?address_id=${encodeURIComponent(addressId)}`;

function row(filter) {
  const item = el("li", undefined, "row");
  const title = el("h3");
  const link = el("a", filter.name);
  link.href = `/filters/${filter.id}`;
  title.append(link, " ", el("span", filter.enabled ? "Enabled" : "Disabled", filter.enabled ? "badge ok" : "badge"));
  const address = addresses.get(filter.address_id);
  const facts = el("dl", undefined, "facts");
  facts.append(el("dt", "Address"), el("dd", address || filter.address_id));
  facts.append(el("dt", "Position"), el("dd", String(filter.position)));
  const toggle = el("button", filter.enabled ? "Disable" : "Enable", "secondary");
  toggle.type = "button";
  toggle.id = `toggle-${filter.id}`;
  toggle.setAttribute("aria-label", `${filter.enabled ? "Disable" : "Enable"} ${filter.name}`);
  toggle.addEventListener("click", () => setEnabled(filter, !filter.enabled));
  item.append(title, facts, toggle);
  return item;
}

let page = Number(query.get("page")) || 1;

async function load(to) {
  const params = new URLSearchParams({ page: String(to), per_page: "25" });
  if (addressId) params.set("address_id", addressId);
  if (search) params.set("search", search);
  const { ok, data } = await api("GET", `/api/filters?${params}`);
  document.getElementById("filters-loading").hidden = true;
  if (!ok) {
    say(error, data);
    return;
  }
  page = data.page;
  list.replaceChildren(...data.data.map(row));
  document.getElementById("filters-empty").hidden = data.total > 0;
  showPager(pager, data, (next) => load(next).then(() => list.querySelector("a")?.focus()));
  // The address of the page stays in the URL, so reload and back land here.
  const shown = new URLSearchParams(window.location.search);
  if (to > 1) shown.set("page", String(to));
  else shown.delete("page");
  window.history.replaceState(null, "", `/filters${shown.toString() ? "?" + shown : ""}`);
}

async function setEnabled(filter, enabled) {
  error.textContent = "";
  const { ok, data } = await api("PATCH", `/api/filters/${filter.id}`, { enabled });
  if (!ok) {
    say(error, data);
    return;
  }
  await load(page);
  status.textContent = `${data.name} is ${enabled ? "enabled" : "disabled"}.`;
  document.getElementById(`toggle-${filter.id}`)?.focus();
}

await load(page);
