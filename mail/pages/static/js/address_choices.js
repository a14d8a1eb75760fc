// Every address of the account, for a <select>: the domains' list, then each
// domain's addresses (100 a page, the API's largest). A panel has a handful of
// domains; the requests for their addresses run side by side.
import { api } from "./common.js";

async function all(path) {
  const items = [];
  for (let page = 1; ; page++) {
    const { ok, data } = await api("GET", `${path}${path.includes("?") ? "&" : "?"}per_page=100&page=${page}`);
    if (!ok) throw data;
    items.push(...data.data);
    if (page >= data.pages) return items;
  }
}

export async function loadAddresses() {
  const domains = await all("/api/domains?sort=name&direction=asc");
  const lists = await Promise.all(
    domains.filter((d) => d.address_count > 0).map((d) => all(`/api/domains/${d.id}/addresses`)),
  );
  return lists.flat();
}

// Fills a <select> after its first (placeholder) option; returns id -> address.
export function fillSelect(select, addresses, chosen) {
  const byId = new Map();
  for (const address of addresses) {
    byId.set(address.id, address);
    const option = new Option(address.unicode_email, address.id, false, address.id === chosen);
    select.append(option);
  }
  return byId;
}
