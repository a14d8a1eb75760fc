// Paging for the API's list envelope ({data, page, per_page, total, pages}):
// previous and next buttons and where you are, in a <nav> the template gives.

export function showPager(nav, list, go) {
  nav.replaceChildren();
  nav.hidden = list.pages <= 1;
  if (nav.hidden) return;
  const previous = button("Previous page", list.page <= 1, () => go(list.page - 1));
  const where = document.createElement("span");
  where.textContent = `Page ${list.page} of ${list.pages} (${list.total})`;
  const next = button("Next page", list.page >= list.pages, () => go(list.page + 1));
  nav.append(previous, where, next);
}

function button(label, disabled, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = "secondary";
  b.textContent = label;
  b.disabled = disabled;
  b.addEventListener("click", onClick);
  return b;
}

// A date from the API (ISO 8601) in the reader's own words and time zone.
export function when(iso) {
  if (!iso) return "";
  return new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

// An element with text, for building rows without innerHTML.
export function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}
