// Rich text: Tiptap (ProseMirror) producing the HTML the API's cleaner keeps
// (paragraphs, headings, lists, quotes, code, links); the server cleans it again.
import { Editor } from "@tiptap/core";
import StarterKit from "@tiptap/starter-kit";
import { h, uid } from "../lib/dom.js";
import { labelOf } from "./basic.js";

const TOOLS = [
  ["Bold", "bold", (c) => c.toggleBold()],
  ["Italic", "italic", (c) => c.toggleItalic()],
  ["Heading", ["heading", { level: 2 }], (c) => c.toggleHeading({ level: 2 })],
  ["Subheading", ["heading", { level: 3 }], (c) => c.toggleHeading({ level: 3 })],
  ["Bulleted list", "bulletList", (c) => c.toggleBulletList()],
  ["Numbered list", "orderedList", (c) => c.toggleOrderedList()],
  ["Quote", "blockquote", (c) => c.toggleBlockquote()],
  ["Code", "codeBlock", (c) => c.toggleCodeBlock()],
];

export function richtext(def, value) {
  const id = uid("f");
  const labelId = `${id}-label`;
  const errorEl = h("p", { class: "field-error", id: `${id}-error`, hidden: true });
  const mount = h("div");
  const tools = h("div", { class: "tools", role: "toolbar", "aria-label": `${labelOf(def)} formatting` });
  const editor = new Editor({
    element: mount,
    injectCSS: false,
    content: value || "",
    extensions: [
      StarterKit.configure({
        heading: { levels: [2, 3, 4] },
        link: { openOnClick: false, autolink: true, HTMLAttributes: { target: null, rel: "noopener noreferrer" } },
      }),
    ],
    editorProps: {
      attributes: { id, role: "textbox", "aria-multiline": "true", "aria-labelledby": labelId, class: "rich-body" },
    },
  });
  const buttons = TOOLS.map(([label, mark, run]) => {
    const btn = h("button", { type: "button", class: "small", "aria-pressed": "false" }, label);
    // A click keeps the caret where it was: the editor never loses focus.
    btn.addEventListener("mousedown", (event) => event.preventDefault());
    btn.addEventListener("click", () => {
      run(editor.chain().focus()).run();
    });
    return { btn, mark };
  });
  const link = h("button", { type: "button", class: "small" }, "Link");
  link.addEventListener("click", () => {
    const previous = editor.getAttributes("link").href || "https://";
    const href = window.prompt("Link address (empty removes the link)", previous);
    if (href === null) return;
    if (href === "") editor.chain().focus().unsetLink().run();
    else editor.chain().focus().extendMarkRange("link").setLink({ href }).run();
  });
  const undo = h("button", { type: "button", class: "small" }, "Undo");
  undo.addEventListener("click", () => editor.chain().focus().undo().run());
  tools.append(...buttons.map((b) => b.btn), link, undo);
  const refresh = () => {
    for (const { btn, mark } of buttons) {
      const active = Array.isArray(mark) ? editor.isActive(...mark) : editor.isActive(mark);
      btn.setAttribute("aria-pressed", String(active));
    }
  };
  editor.on("transaction", refresh);
  const box = h("div", { class: "rich" }, tools, mount);
  const wrap = h(
    "div",
    { class: "field" },
    h("span", { class: "label", id: labelId }, labelOf(def) + (def.required ? " (required)" : "")),
    def.help ? h("p", { class: "help" }, def.help) : null,
    box,
    errorEl,
  );
  // The error is tied to the editable element itself.
  const input = editor.view.dom;
  input.addEventListener("input", () => wrap.dispatchEvent(new Event("input", { bubbles: true })));
  editor.on("update", () => wrap.dispatchEvent(new Event("input", { bubbles: true })));
  return {
    el: wrap,
    value: () => (editor.isEmpty ? "" : editor.getHTML()),
    locate: () => ({ wrap, input, label: labelOf(def) }),
    set: (html) => editor.commands.setContent(html, { emitUpdate: true }),
    editor,
  };
}
