// What the domain and address screens share: lists that page, search and sort
// through the API, a page's regions refreshed from the server after a change,
// and the quota field (MiB on the page, bytes in the API).

import { api, say, signInAgain } from "./common.js";

// "2026-11-22T21:40:00Z" as the server writes it: "2026-11-22 21:40 UTC".
export function when(iso) {
  return iso ? iso.slice(0, 16).replace("T", " ") + " UTC" : "never";
}

export function size(bytes) {
  if (!bytes) return "Unlimited";
  const units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
  let amount = bytes;
  let unit = 0;
  while (amount >= 1024 && unit < units.length - 1) {
    amount /= 1024;
    unit += 1;
  }
  if (unit === 0) return `${amount} bytes`;
  return `${amount.toFixed(1).replace(/\.0$/, "")} ${units[unit]}`;
}

const MIB = 1024 * 1024;

// The quota field's MiB as the API's bytes; "" when empty (the API's default).
export function quotaBytes(input) {
  if (input.value.trim() === "") return "";
  const mib = Number(input.value);
  return Number.isInteger(mib) && mib >= 0 ? mib * MIB : NaN;
}

// Fills a row cloned from the page's <template> with one API object: every
// [data-field] gets its value (through data-format), every [data-href] its link.
function fill(row, item, formats) {
  row.querySelectorAll("[data-field]").forEach((el) => {
    const value = item[el.dataset.field];
    const format = formats[el.dataset.format];
    if (format) format(el, value);
    else el.textContent = value ?? "";
    if (el.dataset.href) el.href = el.dataset.href.replace("{id}", item.id);
  });
  return row;
}

// A list shown by the server, then driven through the API: the controls form
// (search as you type, sort, order, per page) and the pager links ask
// `path` with the list parameters, the rows are redrawn and the address bar
// keeps the query, so a reload or a shared link shows the same page.
export function liveList({ id, path, noun, plural, formats = {} }) {
  const form = document.getElementById(`${id}-controls`);
  const rows = document.getElementById(`${id}-rows`);
  const template = rows.closest("section").querySelector("template");
  const count = document.getElementById(`${id}-count`);
  const empty = document.getElementById(`${id}-empty`);
  const pager = document.getElementById(`${id}-pager`);
  let page = Number(new URLSearchParams(location.search).get("page")) || 1;
  let asked = 0;

  async function load() {
    const params = new URLSearchParams(new FormData(form));
    if (!params.get("search")) params.delete("search");
    params.set("page", String(page));
    const mine = ++asked;
    const { ok, data } = await api("GET", `${path}?${params}`);
    if (mine !== asked) return; // a later keystroke's answer wins
    if (!ok) {
      say(count, data);
      return;
    }
    rows.replaceChildren(
      ...data.data.map((item) => fill(template.content.firstElementChild.cloneNode(true), item, formats)),
    );
    const search = params.get("search");
    count.textContent =
      `${data.total} ${data.total === 1 ? noun : plural}` + (search ? ` matching “${search}”` : "");
    empty.hidden = data.data.length > 0;
    empty.textContent = search ? `No ${noun} matches.` : `No ${plural} yet.`;
    pager.hidden = data.pages <= 1;
    const [prev, next] = pager.querySelectorAll("a");
    prev.hidden = data.page <= 1;
    next.hidden = data.page >= data.pages;
    prev.href = `?${withPage(params, data.page - 1)}`;
    next.href = `?${withPage(params, data.page + 1)}`;
    pager.querySelector(".where").textContent = `Page ${data.page} of ${data.pages}`;
    history.replaceState(null, "", `?${params}`);
  }

  let timer;
  form.addEventListener("input", (event) => {
    if (event.target.type !== "search") return;
    clearTimeout(timer);
    page = 1;
    timer = setTimeout(load, 250);
  });
  form.addEventListener("change", (event) => {
    if (event.target.tagName !== "SELECT") return;
    page = 1;
    load();
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    page = 1;
    load();
  });
  pager.addEventListener("click", (event) => {
    const link = event.target.closest("a[data-page]");
    if (!link) return;
    event.preventDefault();
    page = Number(new URLSearchParams(link.search).get("page")) || 1;
    load().then(() => rows.closest("section").querySelector("h2").scrollIntoView());
  });
  // With scripts, the list applies itself: the Apply button is for scriptless use.
  form.querySelector(".apply").hidden = true;
}

function withPage(params, page) {
  const copy = new URLSearchParams(params);
  copy.set("page", String(page));
  return copy;
}

// Re-reads this page from the server and swaps the named [data-region]s in,
// so a change made through the API shows with the server's own rendering.
export async function refreshRegions(...names) {
  let response;
  try {
    response = await fetch(location.href, { credentials: "same-origin" });
  } catch {
    return false;
  }
  // The session ended meanwhile: the page answered with sign-in (its 303 followed).
  if (response.redirected && new URL(response.url).pathname === "/signin") {
    window.location.assign(signInAgain());
    return false;
  }
  if (!response.ok) return false;
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
  for (const name of names) {
    const now = document.querySelector(`[data-region="${name}"]`);
    const next = fresh.querySelector(`[data-region="${name}"]`);
    if (now && next) now.replaceWith(document.adoptNode(next));
  }
  return true;
}

// Says what happened in a status line and moves focus there, so a screen
// reader hears it and the keyboard continues from the changed section.
export function announce(id, message) {
  const status = document.getElementById(id);
  status.textContent = message;
  status.focus();
}
