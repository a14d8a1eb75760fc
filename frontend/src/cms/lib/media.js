// The media library as the editor and the Media screen use it: upload, list, pick.
import { api, messageOf, query } from "./api.js";
import { announce, button, h, replace } from "./dom.js";

export async function upload(file, extra = {}) {
  const form = new FormData();
  for (const [key, value] of Object.entries(extra)) if (value) form.append(key, value);
  form.append("file", file, file.name);
  return api("POST", "/media", form);
}

export function thumb(media, ...actions) {
  const isImage = media.type && media.type.startsWith("image/");
  return h(
    "figure",
    { class: "thumb", dataset: { id: media.id } },
    isImage ? h("img", { src: media.url, alt: media.alt || "" }) : h("span", { class: "muted" }, media.type),
    h("figcaption", {}, media.filename),
    actions.length ? h("div", { class: "actions" }, actions) : null,
  );
}

// A drop zone for files; calls onFiles with the dropped File list.
export function dropZone(text, onFiles) {
  const zone = h("div", { class: "drop" }, text);
  zone.addEventListener("dragover", (event) => {
    event.preventDefault();
    zone.classList.add("over");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.classList.remove("over");
    if (event.dataTransfer && event.dataTransfer.files.length) onFiles([...event.dataTransfer.files]);
  });
  return zone;
}

// A file input shown as a button; calls onFiles with the chosen files.
export function fileButton(label, onFiles, { multiple = false, accept = "image/*" } = {}) {
  const input = h("input", { type: "file", accept, multiple, class: "visually-hidden", tabindex: -1, "aria-hidden": "true" });
  input.addEventListener("change", () => {
    if (input.files.length) onFiles([...input.files]);
    input.value = "";
  });
  const btn = button(label, () => input.click());
  return h("span", {}, btn, input);
}

// A modal list of the library's images (or, with type "", every file); resolves
// with the chosen records (or []).
export function chooseMedia({ multiple = false, title = "Choose an image", type = "image/" } = {}) {
  const noun = type === "image/" ? "image" : "file";
  return new Promise((resolve) => {
    const chosen = new Map();
    const search = h("input", { type: "search", id: "media-dialog-search", placeholder: "File name, alt text, caption or folder" });
    const grid = h("div", { class: "grid", role: "list" });
    const more = button("Show older", () => load(false));
    const status = h("p", { class: "status", role: "status" });
    const done = button(multiple ? `Add the chosen ${noun}s` : "Cancel", () => close([...chosen.values()]), { class: multiple ? "primary" : "" });
    const dialog = h(
      "dialog",
      { "aria-labelledby": "media-dialog-title" },
      h("h2", { id: "media-dialog-title" }, title),
      h("div", { class: "field" }, h("label", { for: search.id }, "Search the library"), search),
      status,
      grid,
      h("div", { class: "actions" }, more, done, multiple ? button("Cancel", () => close([])) : null),
    );
    let offset = 0;
    async function load(fresh) {
      if (fresh) {
        offset = 0;
        replace(grid);
      }
      const { ok, data } = await api("GET", "/media" + query({ search: search.value, type, offset, limit: 24 }));
      if (!ok) {
        status.textContent = messageOf(data);
        return;
      }
      offset += data.data.length;
      for (const media of data.data) {
        const pick = h("button", { type: "button", class: "small", "aria-pressed": multiple ? "false" : null }, multiple ? "Choose" : `Use this ${noun}`);
        pick.setAttribute("aria-label", `${multiple ? "Choose" : "Use"} ${media.filename}`);
        pick.addEventListener("click", () => {
          if (!multiple) return close([media]);
          if (chosen.has(media.id)) chosen.delete(media.id);
          else chosen.set(media.id, media);
          pick.setAttribute("aria-pressed", String(chosen.has(media.id)));
        });
        grid.append(h("div", { role: "listitem" }, thumb(media, pick)));
      }
      more.hidden = offset >= data.meta.total;
      status.textContent = data.meta.total ? `${data.meta.total} ${noun}s` : `No ${noun}s yet: upload one.`;
    }
    let timer;
    search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => load(true), 250);
    });
    function close(result) {
      dialog.close();
      dialog.remove();
      resolve(result);
    }
    dialog.addEventListener("cancel", (event) => {
      event.preventDefault();
      close([]);
    });
    document.body.append(dialog);
    dialog.showModal();
    search.focus();
    load(true);
  });
}

export function announceUpload(result) {
  announce(result.ok ? `Uploaded ${result.data.filename}` : `Upload refused: ${messageOf(result.data)}`);
}
