// The media library: upload (button or drop) with alt text, caption and
// folder; search; edit; delete, with the entries that still use a file named.
import "../lib/shell.js";
import { ADMIN, api, can, latest, messageOf, query } from "../lib/api.js";
import { alertBox, announce, button, h, labelled, replace, screenRoot, showAlert } from "../lib/dom.js";
import { dropZone, fileButton, thumb, upload } from "../lib/media.js";
import { Problems } from "../lib/problems.js";

const root = screenRoot();
const box = alertBox();
const status = h("p", { class: "status", role: "status" });
const grid = h("ul", { class: "grid library items", "aria-label": "Files" });
const more = button("Show older files", () => load(false));
const search = h("input", { type: "search", placeholder: "File name, alt text, caption or folder" });
const folder = h("input", { type: "text", placeholder: "All folders" });
const newAlt = h("input", { type: "text" });
const newFolder = h("input", { type: "text" });
let offset = 0;

function editor(media) {
  const alt = h("input", { type: "text", value: media.alt || "" });
  const caption = h("input", { type: "text", value: media.caption || "" });
  const where = h("input", { type: "text", value: media.folder || "" });
  const wraps = { alt: labelled("Alt text", alt), caption: labelled("Caption", caption), folder: labelled("Folder", where) };
  const errors = alertBox();
  const problems = new Problems(errors, (key) => (wraps[key] ? { wrap: wraps[key], input: wraps[key].querySelector("input"), label: key } : null));
  const saved = h("p", { class: "status", role: "status" });
  const form = h("form", { novalidate: true, "aria-label": `Details of ${media.filename}` }, errors, wraps.alt, wraps.caption, wraps.folder);
  if (can("media.manage")) {
    form.append(h("div", { class: "actions" }, h("button", { type: "submit", class: "small primary" }, "Save"), button("Delete", () => remove(media, errors), { class: "small danger", "aria-label": `Delete ${media.filename}` })), saved);
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const { ok, data } = await api("PATCH", `/media/${media.id}`, { alt: alt.value, caption: caption.value, folder: where.value });
    if (!ok) return problems.show(data);
    problems.clear();
    saved.textContent = "Saved.";
    announce(`${media.filename} saved`);
  });
  const size = media.width ? `${media.width}×${media.height} · ` : "";
  return h("li", { class: "item" }, thumb(media), h("p", { class: "muted" }, `${size}${Math.ceil(media.size / 1024)} KB · ${media.type}`), form);
}

async function remove(media, errors) {
  if (!window.confirm(`Delete ${media.filename}?`)) return;
  const { ok, data } = await api("DELETE", `/media/${media.id}`);
  if (ok) {
    status.textContent = `${media.filename} was deleted.`;
    return load(true);
  }
  const referrers = (data.details && data.details.referrers) || [];
  showAlert(
    errors,
    h("p", {}, messageOf(data)),
    referrers.length
      ? h("ul", {}, referrers.map((r) => h("li", {}, h("a", { href: r.trashed ? `${ADMIN}/trash` : `${ADMIN}/entries/${r.id}` }, r.title || r.id), ` (${r.type}${r.trashed ? ", in the trash" : ""}: ${r.keys.join(", ")})`)))
      : null,
  );
}

const newest = latest();
async function load(fresh) {
  const mine = newest();
  if (fresh) {
    offset = 0;
    replace(grid);
  }
  const { ok, data } = await api("GET", "/media" + query({ search: search.value.trim(), folder: folder.value.trim(), offset, limit: 24 }));
  if (!mine()) return;
  if (!ok) return showAlert(box, h("p", {}, messageOf(data)));
  offset += data.data.length;
  grid.append(...data.data.map(editor));
  more.hidden = offset >= data.meta.total;
  if (fresh) {
    const filtered = search.value.trim() || folder.value.trim();
    const count = data.meta.total === 1 ? "1 file" : `${data.meta.total} files`;
    status.textContent = data.meta.total ? `${count}${filtered ? " found" : ""}.` : filtered ? "No file matches." : "No files yet.";
  }
}

async function take(files) {
  for (const file of files) {
    status.textContent = `Uploading ${file.name}…`;
    const result = await upload(file, { alt: newAlt.value, folder: newFolder.value });
    if (!result.ok) {
      showAlert(box, h("p", {}, `${file.name}: ${messageOf(result.data)}`));
      announce(`Upload refused: ${messageOf(result.data)}`);
      continue;
    }
    status.textContent = `Uploaded ${result.data.filename}.`;
    announce(status.textContent);
  }
  load(true);
}

let timer;
for (const input of [search, folder]) {
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => load(true), 250);
  });
}
replace(
  root,
  can("media.manage")
    ? h("section", { class: "card", "aria-labelledby": "upload-h" }, h("h2", { id: "upload-h" }, "Upload"), h("div", { class: "row" }, labelled("Alt text for the upload", newAlt), labelled("Folder for the upload", newFolder)), h("div", { class: "actions" }, fileButton("Choose files to upload", take, { multiple: true, accept: "" })), dropZone("…or drop files here", take))
    : null,
  h("div", { class: "toolbar", role: "search", "aria-label": "Media" }, labelled("Search", search), labelled("Folder", folder)),
  box,
  status,
  grid,
  h("div", { class: "actions" }, more),
);
load(true);
