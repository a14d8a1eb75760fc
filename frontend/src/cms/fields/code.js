// Markdown (with a preview) and JSON (with syntax checking) in CodeMirror 6.
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { drawSelection, EditorView, highlightSpecialChars, keymap } from "@codemirror/view";
import { json, jsonParseLinter } from "@codemirror/lang-json";
import { markdown as markdownLanguage } from "@codemirror/lang-markdown";
import { HighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { linter } from "@codemirror/lint";
import { tags } from "@lezer/highlight";
import DOMPurify from "dompurify";
import { marked } from "marked";
import { h, uid } from "../lib/dom.js";
import { labelOf } from "./basic.js";

// What the "minimal setup" of CodeMirror holds: undo history, keys, selection.
const minimalSetup = [highlightSpecialChars(), history(), drawSelection(), keymap.of([...defaultKeymap, ...historyKeymap])];

// Colours from the style sheet's variables, so both schemes keep their contrast.
const highlight = HighlightStyle.define([
  { tag: [tags.keyword, tags.bool, tags.null], color: "var(--syn-keyword)" },
  { tag: [tags.string, tags.special(tags.string)], color: "var(--syn-string)" },
  { tag: [tags.number], color: "var(--syn-number)" },
  { tag: [tags.propertyName, tags.heading], color: "var(--syn-name)", fontWeight: "600" },
  { tag: [tags.emphasis], fontStyle: "italic" },
  { tag: [tags.strong], fontWeight: "700" },
  { tag: [tags.link, tags.url], color: "var(--syn-name)", textDecoration: "underline" },
  { tag: [tags.comment, tags.meta, tags.processingInstruction], color: "var(--muted)" },
]);

function codeEditor(def, doc, language, extra = []) {
  const id = uid("f");
  const labelId = `${id}-label`;
  const errorEl = h("p", { class: "field-error", id: `${id}-error`, hidden: true });
  const mount = h("div");
  const wrap = h("div", { class: "field" });
  const view = new EditorView({
    doc,
    parent: mount,
    extensions: [
      minimalSetup,
      EditorView.lineWrapping,
      language,
      syntaxHighlighting(highlight),
      EditorView.contentAttributes.of({ id, "aria-labelledby": labelId, "aria-multiline": "true", role: "textbox" }),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) wrap.dispatchEvent(new Event("input", { bubbles: true }));
      }),
      ...extra,
    ],
  });
  wrap.append(h("span", { class: "label", id: labelId }, labelOf(def) + (def.required ? " (required)" : "")));
  if (def.help) wrap.append(h("p", { class: "help" }, def.help));
  return { id, wrap, mount, view, errorEl, input: view.contentDOM };
}

export function markdown(def, value) {
  const { wrap, mount, view, errorEl, input, id } = codeEditor(def, value || "", markdownLanguage());
  const preview = h("div", { class: "md-preview", id: `${id}-preview`, role: "region", "aria-label": `${labelOf(def)} preview`, hidden: true });
  const toggle = h("button", { type: "button", class: "small", "aria-expanded": "false", "aria-controls": preview.id }, "Show preview");
  toggle.addEventListener("click", () => {
    const open = preview.hidden;
    if (open) {
      // Rendered here only to look at; the API stores the source as written.
      preview.innerHTML = DOMPurify.sanitize(marked.parse(view.state.doc.toString()), { FORBID_TAGS: ["img", "style"] });
    }
    preview.hidden = !open;
    mount.hidden = open;
    toggle.textContent = open ? "Edit" : "Show preview";
    toggle.setAttribute("aria-expanded", String(open));
  });
  wrap.append(h("div", { class: "actions" }, toggle), mount, preview, errorEl);
  return {
    el: wrap,
    value: () => view.state.doc.toString(),
    locate: () => ({ wrap, input, label: labelOf(def) }),
    set: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }),
  };
}

export class ClientProblem extends Error {}

export function jsonField(def, value) {
  const text = value === null || value === undefined ? "" : JSON.stringify(value, null, 2);
  const status = h("p", { class: "code-status", role: "status" });
  const check = (doc) => {
    if (!doc.trim()) {
      status.textContent = "Empty (null).";
      status.classList.remove("bad");
      return;
    }
    try {
      JSON.parse(doc);
      status.textContent = "Valid JSON.";
      status.classList.remove("bad");
    } catch (error) {
      status.textContent = `Not valid JSON: ${error.message}`;
      status.classList.add("bad");
    }
  };
  const { wrap, mount, view, errorEl, input } = codeEditor(def, text, json(), [
    // An empty document is null, not an error.
    linter((view) => (view.state.doc.length && view.state.doc.toString().trim() ? jsonParseLinter()(view) : [])),
    EditorView.updateListener.of((update) => update.docChanged && check(update.state.doc.toString())),
  ]);
  check(text);
  wrap.append(mount, status, errorEl);
  return {
    el: wrap,
    value: () => {
      const doc = view.state.doc.toString();
      if (!doc.trim()) return null;
      try {
        return JSON.parse(doc);
      } catch (error) {
        throw new ClientProblem(`is not valid JSON: ${error.message}`);
      }
    },
    locate: () => ({ wrap, input, label: labelOf(def) }),
  };
}
