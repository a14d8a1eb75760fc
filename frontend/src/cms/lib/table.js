// A paged list: the table, its pager, and the list's state kept in the address.
import { h, replace } from "./dom.js";

export function table(caption, headings, rows) {
  // At phone width the header row is hidden and each cell shows its heading.
  for (const row of rows) [...row.children].forEach((cell, i) => headings[i] && (cell.dataset.label = headings[i]));
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "stack" },
      h("caption", { class: "visually-hidden" }, caption),
      h("thead", {}, h("tr", {}, headings.map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, rows),
    ),
  );
}

export function cells(...values) {
  return h("tr", {}, values.map((v) => h("td", {}, v)));
}

const ONE = { entries: "entry", people: "person", changes: "change" };

// meta: {total, page, limit}; go(page) loads another page.
export function pager(el, meta, go, noun) {
  const pages = Math.max(1, Math.ceil(meta.total / meta.limit));
  const prev = h("button", { type: "button", disabled: meta.page <= 1 }, "Previous page");
  const next = h("button", { type: "button", disabled: meta.page >= pages }, "Next page");
  prev.addEventListener("click", () => go(meta.page - 1));
  next.addEventListener("click", () => go(meta.page + 1));
  const count = meta.total === 1 ? `1 ${ONE[noun] || noun}` : `${meta.total} ${noun}`;
  replace(el, prev, h("span", {}, `Page ${meta.page} of ${pages} · ${count}`), next);
}

export function readQuery(defaults) {
  const params = new URLSearchParams(location.search);
  const out = { ...defaults };
  for (const key of Object.keys(defaults)) if (params.has(key)) out[key] = params.get(key);
  return out;
}

export function writeQuery(state, defaults) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(state)) if (value !== "" && value !== defaults[key]) params.set(key, value);
  const text = params.toString();
  history.replaceState(null, "", location.pathname + (text ? `?${text}` : ""));
}
