// The trash: entries moved there, restored as drafts or deleted for good.
import "../lib/shell.js";
import { ADMIN, api, can, messageOf, query } from "../lib/api.js";
import { alertBox, announce, button, h, replace, screenRoot, showAlert, when } from "../lib/dom.js";
import { cells, pager, table } from "../lib/table.js";

const root = screenRoot();
const box = alertBox();
const note = h("p", { class: "status", role: "status" });
const list = h("div");
const pages = h("nav", { class: "pager", "aria-label": "Pages of the trash" });
root.append(h("p", { class: "muted" }, "An entry restored from the trash comes back as a draft."), note, box, list, pages);
const moved = new URLSearchParams(location.search).get("moved");
if (moved !== null) {
  note.textContent = `“${moved}” was moved to the trash.`;
  history.replaceState(null, "", location.pathname);
}

async function load(page = 1) {
  const { ok, data } = await api("GET", "/trash" + query({ page, limit: 20 }));
  if (!ok) return showAlert(box, h("p", {}, messageOf(data)));
  if (!data.data.length) {
    replace(list, h("p", { class: "muted" }, "The trash is empty."));
  } else {
    replace(
      list,
      table(
        "Entries in the trash",
        ["Title", "Type", "Trashed", ""],
        data.data.map((e) =>
          cells(
            e.title || "(untitled)",
            e.type,
            when(e.deletedAt),
            h(
              "div",
              { class: "actions" },
              button("Restore", async () => {
                const r = await api("POST", `/trash/${e.id}/restore`);
                if (!r.ok) return showAlert(box, h("p", {}, messageOf(r.data)));
                note.replaceChildren(`“${e.title}” was restored as a draft. `, h("a", { href: `${ADMIN}/entries/${e.id}` }, "Open it"));
                announce(`${e.title} restored as a draft`);
                load(page);
              }, { class: "small", "aria-label": `Restore ${e.title}` }),
              can("content.publish")
                ? button("Delete for good", async () => {
                    if (!window.confirm(`Delete “${e.title}” and its revisions for good?`)) return;
                    const r = await api("DELETE", `/trash/${e.id}`);
                    if (!r.ok) return showAlert(box, h("p", {}, messageOf(r.data)));
                    note.textContent = `“${e.title}” was deleted for good.`;
                    load(page);
                  }, { class: "small danger", "aria-label": `Delete ${e.title} for good` })
                : null,
            ),
          ),
        ),
      ),
    );
  }
  pager(pages, data.meta, load, "entries");
}
load();
