// Shared by the sending screens (API keys, suppressions, sent email): tables
// built with textContent only, so no value from the API is ever parsed as HTML.

export function when(iso) {
  if (!iso) return "—";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

// A table cell with text (or a node), appended to the row.
export function cell(row, content, tag = "td") {
  const el = document.createElement(tag);
  if (content instanceof Node) el.append(content);
  else el.textContent = content ?? "";
  row.append(el);
  return el;
}

// An email's or recipient's state, as a word with its own color class.
export function badge(status) {
  const el = document.createElement("span");
  el.className = `state state-${status}`;
  el.textContent = status.replaceAll("_", " ");
  return el;
}

export function button(label, onClick, accessibleName) {
  const el = document.createElement("button");
  el.type = "button";
  el.className = "secondary small";
  el.textContent = label;
  if (accessibleName) el.setAttribute("aria-label", accessibleName);
  el.addEventListener("click", onClick);
  return el;
}

// Each cell carries its column's name, which the narrow layout shows beside it
// (app.css, table.stack: on a phone a row reads as a small card).
export function labelCells(table) {
  const names = [...table.querySelectorAll("thead th")].map((th) => th.textContent.trim());
  for (const row of table.querySelectorAll("tbody tr")) {
    [...row.children].forEach((el, i) => {
      if (names[i]) el.dataset.label = names[i];
    });
  }
}

// Shows a list's rows, or its empty note.
export function showRows(table, empty, rows) {
  const body = table.querySelector("tbody");
  body.replaceChildren(...rows);
  labelCells(table);
  table.hidden = rows.length === 0;
  empty.hidden = rows.length !== 0;
}
