// A search box over a long list already on the page: the entry editor's term
// picker (a site has hundreds of tags) and a taxonomy's terms. Rows that do
// not contain the typed text are hidden; `keep(row)` rows (a ticked term)
// always stay, so narrowing never hides what the entry is filed under.
import { h, labelled } from "./dom.js";

export const FIND_FROM = 12; // shorter lists are read at a glance

export function finder(label, rows, { keep = () => false, noun = "terms" } = {}) {
  const input = h("input", { type: "search", autocomplete: "off", placeholder: "Type part of a name" });
  const status = h("p", { class: "muted finder-count", role: "status" });
  input.addEventListener("input", () => {
    const text = input.value.trim().toLowerCase();
    let shown = 0;
    for (const row of rows) {
      const show = !text || row.textContent.toLowerCase().includes(text) || keep(row);
      row.hidden = !show;
      if (show) shown += 1;
    }
    status.textContent = text ? `${shown} of ${rows.length} ${noun} shown.` : "";
  });
  // Enter in the box narrows; it must not submit the form around it.
  input.addEventListener("keydown", (event) => event.key === "Enter" && event.preventDefault());
  return h("div", { class: "finder" }, labelled(label, input), status);
}
