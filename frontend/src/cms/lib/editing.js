// The editor open on this page, if any, so the assistant's tray can ask
// whether it has unsaved changes and have it reload after a proposal is applied.
//   setOpenEditor({kind: "entry", id, isDirty(), save() -> Promise<bool>, discard(), reload()})
import { h } from "./dom.js";

let open = null;

export function setOpenEditor(editor) {
  open = editor;
}

export function openEditor() {
  return open;
}

// A modal question: resolves to the value of the button chosen, or null (Escape).
//   await choose("Unsaved changes", "…", [["save", "Save them"], ["discard", "Discard them"]])
export function choose(title, text, choices) {
  return new Promise((resolve) => {
    const heading = h("h2", { id: "choose-h" }, title);
    const dialog = h(
      "dialog",
      { "aria-labelledby": "choose-h", class: "choose" },
      heading,
      h("p", {}, text),
      h(
        "div",
        { class: "actions" },
        choices.map(([value, label], i) =>
          h("button", { type: "button", class: i === 0 ? "primary" : undefined, onclick: () => dialog.close(value) }, label),
        ),
        h("button", { type: "button", onclick: () => dialog.close("") }, "Cancel"),
      ),
    );
    const before = document.activeElement;
    dialog.addEventListener("close", () => {
      dialog.remove();
      if (before && before.isConnected) before.focus();
      resolve(dialog.returnValue || null);
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}
