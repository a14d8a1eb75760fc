// The host's page in a sandboxed frame, and the admin's half of the overlay's
// postMessage protocol (screens/visual-overlay.js has the other half).
//
// sandbox="allow-scripts" and nothing else: the page runs (the overlay is a
// script) in an opaque origin, so even a site on this very origin cannot read
// the admin, its cookies or its storage, submit forms, open windows or move
// the top page. Its messages therefore come from origin "null": a message is
// taken only from this frame's own window, on the overlay's channel, in the
// shape expected. What is sent to it names sections and fields, nothing secret.
import { h } from "./dom.js";

const CHANNEL = "cms-visual";
const ID = /^[A-Za-z$][A-Za-z0-9_$-]{0,63}$/;

function cleanId(value) {
  return typeof value === "string" && ID.test(value) ? value : null;
}

export class PreviewFrame {
  // onReady(sections) when the page reports; onSelect(section, field) and
  // onPart(id) when the editor clicks a section or field, or a shared part.
  constructor({ onReady, onSelect, onPart }) {
    this.el = h("iframe", { class: "visual-frame", sandbox: "allow-scripts", referrerpolicy: "same-origin", title: "Preview" });
    window.addEventListener("message", (event) => {
      if (event.source !== this.el.contentWindow || event.origin !== "null") return;
      const data = event.data;
      if (!data || typeof data !== "object" || data.channel !== CHANNEL) return;
      if (data.type === "ready" && Array.isArray(data.sections)) {
        // Only the page last asked for: a slower, older load reports nothing.
        if (data.href !== this.src) return;
        const sections = data.sections
          .filter((s) => s && cleanId(s.id))
          .map((s) => ({ id: s.id, hidden: s.hidden === true }));
        onReady(sections);
      } else if (data.type === "select" && data.part !== undefined) {
        const part = cleanId(data.part);
        if (part) onPart(part);
      } else if (data.type === "select") {
        const section = cleanId(data.section);
        const field = cleanId(data.field);
        if (section || field) onSelect(section, field);
      }
    });
  }

  title(text) {
    this.el.title = text;
  }

  load(src) {
    this.src = new URL(src, location.href).href;
    this.el.src = this.src;
  }

  outline(section, field, part = null) {
    this.send({ type: "outline", section, field, part });
  }

  // The website manifest's parts, so a click on the header or footer names one.
  parts(parts) {
    this.send({ type: "parts", parts: parts.map((p) => ({ id: p.id, selector: p.selector })) });
  }

  send(message) {
    const win = this.el.contentWindow;
    // The frame's origin is opaque: it cannot be named as the target.
    if (win) win.postMessage({ channel: CHANNEL, ...message }, "*");
  }
}
