// The field assistant beside each text-like input of the entry editor: rewrite,
// shorten, translate (into a language the person names) or suggest, streamed
// into a preview (POST /api/assistant/field). Nothing reaches the field until
// the person accepts; then it is an edit like typing, saved with the form.
import { can, messageOf } from "../lib/api.js";
import { announce, button, h, uid } from "../lib/dom.js";
import { postStream } from "../lib/sse.js";
import { labelOf } from "./basic.js";

export const TEXT_LIKE = new Set(["text", "textarea", "richtext", "markdown"]);
const ACTIONS = [
  ["rewrite", "Rewrite"],
  ["shorten", "Shorten"],
  ["translate", "Translate"],
  ["suggest", "Suggest"],
];

// Adds the assistant's button and panel to one field's widget, when it is text-like.
export function fieldAssistant(def, widget, context) {
  if (!widget || !widget.set || !TEXT_LIKE.has(def.type) || !can("content.write")) return;
  const name = labelOf(def);
  const id = uid("assist");
  const action = h("select", { id: `${id}-action` }, ACTIONS.map(([value, text]) => h("option", { value }, text)));
  const language = h("input", { type: "text", id: `${id}-language`, list: `${id}-languages`, maxlength: 60, autocomplete: "off" });
  const languages = h("datalist", { id: `${id}-languages` }, ["English", "French", "German", "Spanish", "Italian", "Portuguese", "Dutch", "Japanese"].map((l) => h("option", { value: l })));
  const languageField = h("div", { class: "field", hidden: true }, h("label", { for: language.id }, "Into which language"), language, languages);
  // Not a live region: the pieces stream in silently and "ready" is announced once.
  const preview = h("div", { class: "assist-preview", id: `${id}-preview`, role: "region", "aria-label": `Suggestion for ${name}` });
  const status = h("p", { class: "muted", role: "status" });
  const accept = button("Use this", () => {
    widget.set(suggestion);
    close();
    announce(`${name}: the suggestion is in the field, not saved yet`);
    const input = widget.locate([]).input;
    if (input) input.focus();
  }, { class: "primary", hidden: true });
  const discard = button("Discard", () => {
    close();
    announce("Suggestion discarded");
  }, { hidden: true });
  let suggestion = "";
  let running = null;
  const ask = h("button", { type: "submit" }, "Ask");
  const form = h(
    "div",
    { class: "assist-panel", id: `${id}-panel`, role: "group", "aria-label": `Assistant for ${name}`, hidden: true },
    h("div", { class: "row" }, h("div", { class: "field" }, h("label", { for: action.id }, "What to do"), action), languageField),
    h("div", { class: "actions" }, ask, button("Close", () => close(), { class: "small" })),
    status,
    preview,
    h("div", { class: "actions" }, accept, discard),
  );
  action.addEventListener("change", () => (languageField.hidden = action.value !== "translate"));
  ask.type = "button";
  ask.addEventListener("click", run);
  const toggle = h("button", { type: "button", class: "small assist-toggle", "aria-expanded": "false", "aria-controls": form.id }, `Assistant: ${name}`);
  toggle.addEventListener("click", () => (form.hidden ? openPanel() : close()));
  form.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      close();
    }
  });
  widget.el.append(h("div", { class: "assist" }, toggle, form));

  function openPanel() {
    form.hidden = false;
    toggle.setAttribute("aria-expanded", "true");
    action.focus();
  }

  function close() {
    if (running) running.abort();
    form.hidden = true;
    toggle.setAttribute("aria-expanded", "false");
    preview.textContent = "";
    status.textContent = "";
    accept.hidden = discard.hidden = true;
    toggle.focus();
  }

  async function run() {
    if (running) return;
    if (action.value === "translate" && !language.value.trim()) {
      status.textContent = "Name the language to translate into.";
      language.focus();
      return;
    }
    suggestion = "";
    preview.textContent = "";
    accept.hidden = discard.hidden = true;
    status.textContent = "Writing…";
    ask.disabled = true;
    running = new AbortController();
    let failed = null;
    const body = { action: action.value, value: String(widget.value() ?? ""), field: name, context: `Entry title: ${context()}` };
    if (action.value === "translate") body.language = language.value.trim();
    const result = await postStream(
      "/assistant/field",
      body,
      (event, data) => {
        if (event === "text") preview.textContent += data.delta;
        else if (event === "done") suggestion = data.suggestion;
        else if (event === "error") failed = data;
      },
      running.signal,
    );
    running = null;
    ask.disabled = false;
    if (!result.ok || failed) {
      status.textContent = messageOf(failed || result.data);
      return;
    }
    preview.textContent = suggestion;
    status.textContent = "Suggestion ready: use it or discard it.";
    announce(`Suggestion for ${name} ready`);
    accept.hidden = discard.hidden = false;
  }
}
