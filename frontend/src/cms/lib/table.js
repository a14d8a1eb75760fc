// A paged list: the table, its pager, and the list's state kept in the address
// (and its scroll position in the history entry, for Back from a row's page).
import { h, replace } from "./dom.js";

export function table(caption, headings, rows) {
  // At phone width the header row is hidden and each cell shows its heading.
  for (const row of rows) [...row.children].forEach((cell, i) => headings[i] && (cell.dataset.label = headings[i]));
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      // Focused (tabindex -1) after a page change, so a keyboard continues at its first row.
      { class: "stack", tabindex: "-1" },
      h("caption", { class: "visually-hidden" }, caption),
      // A column of buttons has no visible heading; a screen reader still hears one.
      h("thead", {}, h("tr", {}, headings.map((t) => h("th", { scope: "col" }, t || h("span", { class: "visually-hidden" }, "Actions"))))),
      h("tbody", {}, rows),
    ),
  );
}

export function cells(...values) {
  return h("tr", {}, values.map((v) => h("td", {}, v)));
}

const ONE = { entries: "entry", people: "person", changes: "change" };

export function pageCount(meta) {
  return Math.max(1, Math.ceil(meta.total / meta.limit));
}

// meta: {total, page, limit}; go(page) loads another page. Shows the range
// ("41–60 of 600 entries") and First, Previous, Next and Last: with hundreds
// of rows the last page is one press away, not thirty.
export function pager(el, meta, go, noun) {
  const pages = pageCount(meta);
  const move = (label, page, off) => {
    const b = h("button", { type: "button", disabled: off }, label);
    b.addEventListener("click", () => go(page));
    return b;
  };
  const first = meta.total ? (meta.page - 1) * meta.limit + 1 : 0;
  const last = Math.min(meta.page * meta.limit, meta.total);
  const count = meta.total === 1 ? `1 ${ONE[noun] || noun}` : `${meta.total} ${noun}`;
  const range = meta.total > meta.limit ? `${first}–${last} of ${count}` : count;
  replace(
    el,
    move("First page", 1, meta.page <= 1),
    move("Previous page", meta.page - 1, meta.page <= 1),
    h("span", { class: "range" }, `Page ${meta.page} of ${pages} · ${range}`),
    move("Next page", meta.page + 1, meta.page >= pages),
    move("Last page", pages, meta.page >= pages),
  );
}

// After a page change the new rows are where a keyboard and the eye go next.
export function focusRows(list) {
  const tableEl = list.querySelector("table");
  if (tableEl) tableEl.focus();
}

export function readQuery(defaults) {
  const params = new URLSearchParams(location.search);
  const out = { ...defaults };
  for (const key of Object.keys(defaults)) if (params.has(key)) out[key] = params.get(key);
  return out;
}

// The state into the address: `push` makes a history entry (a page or a
// filter chosen, so Back returns to it); typing in a search box replaces one.
export function writeQuery(state, defaults, push = false) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(state)) if (value !== "" && value !== defaults[key]) params.set(key, value);
  const text = params.toString();
  const url = location.pathname + (text ? `?${text}` : "");
  if (url === location.pathname + location.search) return;
  if (push) history.pushState({}, "", url);
  else history.replaceState(history.state, "", url);
}

// The list's scroll position, kept in its history entry. The rows are drawn
// after the page has loaded (and no-store pages are not kept in the back
// cache), too late for the browser's own restoration, so Back from an entry
// opened low on page 7 would land at the top. Returns restore(), called once
// the rows of the entry shown are drawn.
export function keepScroll() {
  history.scrollRestoration = "manual";
  const save = () => history.replaceState({ ...(history.state || {}), scroll: Math.round(scrollY) }, "");
  let timer;
  addEventListener("scroll", () => {
    clearTimeout(timer);
    timer = setTimeout(save, 150);
  }, { passive: true });
  addEventListener("pagehide", save);
  return () => scrollTo(0, (history.state && history.state.scroll) || 0);
}
