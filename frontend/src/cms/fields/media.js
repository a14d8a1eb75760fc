// Media (one image) and gallery (ordered images): pick from the library,
// upload with a button or by dropping files, reorder a gallery by drag or keys.
import { api, messageOf } from "../lib/api.js";
import { announce, button, h, replace, uid } from "../lib/dom.js";
import { announceUpload, chooseMedia, dropZone, fileButton, thumb, upload } from "../lib/media.js";
import { moveButtons, moveInArray, reorderable } from "../lib/reorder.js";
import { labelOf } from "./basic.js";

async function records(ids) {
  const found = await Promise.all(ids.map((id) => api("GET", `/media/${encodeURIComponent(id)}`)));
  return found.map((r, i) => (r.ok ? r.data : { id: ids[i], filename: `missing image ${ids[i]}`, type: "", url: "" }));
}

function frame(def, multiple) {
  const id = uid("f");
  const legend = h("legend", { id: `${id}-label` }, labelOf(def) + (def.required ? " (required)" : ""));
  const errorEl = h("p", { class: "field-error", id: `${id}-error`, hidden: true });
  const status = h("p", { class: "status", role: "status" });
  const wrap = h("fieldset", { class: "field" }, legend, def.help ? h("p", { class: "help" }, def.help) : null);
  return { id, wrap, errorEl, status, multiple };
}

export function media(def, value) {
  const { wrap, errorEl, status } = frame(def, false);
  let current = null;
  const shown = h("div", { class: "media-pick" });
  const changed = () => wrap.dispatchEvent(new Event("input", { bubbles: true }));
  const render = () => {
    replace(shown, current ? thumb(current, button("Remove", () => set(null), { class: "small", "aria-label": `Remove ${current.filename}` })) : h("p", { class: "muted" }, "No image chosen."));
  };
  const set = (record) => {
    current = record;
    render();
    changed();
  };
  const take = async (files) => {
    status.textContent = `Uploading ${files[0].name}…`;
    const result = await upload(files[0]);
    announceUpload(result);
    status.textContent = result.ok ? `Uploaded ${result.data.filename}.` : `Upload refused: ${messageOf(result.data)}`;
    if (result.ok) set(result.data);
  };
  const pick = button("Choose from the library", async () => {
    const [record] = await chooseMedia();
    if (record) set(record);
    pick.focus();
  });
  wrap.append(shown, h("div", { class: "actions" }, pick, fileButton("Upload an image", take)), dropZone("…or drop an image here", take), status, errorEl);
  if (value) records([value]).then(([record]) => ((current = record), render()));
  else render();
  return {
    el: wrap,
    value: () => (current ? current.id : null),
    locate: () => ({ wrap, input: pick, label: labelOf(def) }),
  };
}

export function gallery(def, value) {
  const { wrap, errorEl, status } = frame(def, true);
  const items = [];
  const list = h("ul", { class: "media-pick items", "aria-label": `${labelOf(def)} images, in order` });
  const changed = () => wrap.dispatchEvent(new Event("input", { bubbles: true }));
  const rows = new WeakMap();
  const relabel = () => {
    [...list.children].forEach((li, i) => rows.get(li).label(`${items[i].filename} (image ${i + 1} of ${items.length})`));
  };
  const row = (record) => {
    const li = h("li");
    const moves = moveButtons(() => [...list.children].indexOf(li), () => items.length, move, (i) => items[i].filename);
    rows.set(li, moves);
    const remove = button("Remove", () => {
      const at = [...list.children].indexOf(li);
      items.splice(at, 1);
      li.remove();
      relabel();
      changed();
      announce(`${record.filename} removed`);
    }, { class: "small", "aria-label": `Remove ${record.filename}` });
    li.append(thumb(record, moves.handle, moves.up, moves.down, remove));
    return li;
  };
  const move = (from, to, byKeyboard) => {
    moveInArray(items, from, to);
    if (byKeyboard) {
      const node = list.children[from];
      node.remove();
      list.insertBefore(node, list.children[to] || null);
    }
    relabel();
    changed();
  };
  reorderable(list, { onMove: move });
  const add = (records_) => {
    for (const record of records_) {
      items.push(record);
      list.append(row(record));
    }
    relabel();
    if (records_.length) changed();
  };
  const take = async (files) => {
    for (const file of files) {
      status.textContent = `Uploading ${file.name}…`;
      const result = await upload(file);
      announceUpload(result);
      status.textContent = result.ok ? `Uploaded ${result.data.filename}.` : `Upload refused: ${messageOf(result.data)}`;
      if (result.ok) add([result.data]);
    }
  };
  const pick = button("Add from the library", async () => {
    add(await chooseMedia({ multiple: true, title: "Add images" }));
    pick.focus();
  });
  wrap.append(list, h("div", { class: "actions" }, pick, fileButton("Upload images", take, { multiple: true })), dropZone("…or drop images here", take), status, errorEl);
  if (value && value.length) records(value).then(add);
  return {
    el: wrap,
    value: () => items.map((m) => m.id),
    locate: () => ({ wrap, input: pick, label: labelOf(def) }),
  };
}
