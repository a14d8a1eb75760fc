// The visual preview's overlay: not a screen of the admin but the script the
// CMS links into the host's page in editing mode (render_visual), inside the
// admin's sandboxed frame. It reads the data-visual-* attributes render_visual
// wrote, reports them to the admin, and tells it what the editor clicked; the
// admin tells it what to outline. Nothing is saved from here: the admin saves
// through the ordinary entry routes and reloads the frame.
//
// Protocol (docs/content.md, "Visual preview in the admin"): every message is
// {channel: "cms-visual", type, ...}.
//   frame -> admin: ready {sections: [{id, label, movable, hidden, fields}], fields: [key], href}
//                   select {section, field} | {part}
//   admin -> frame: outline {section, field}
//                   parts {parts: [{id, selector}]} (the website manifest's shared parts)
// The frame's origin is opaque (sandbox without allow-same-origin), so the
// admin checks the sender's window; here the admin's origin is this script's
// own, and only the parent window of that origin is listened to.
(() => {
  const script = document.currentScript;
  if (!script || window.parent === window) return;
  const ADMIN = new URL(script.src).origin;
  const CHANNEL = "cms-visual";
  let parts = []; // [{id, selector}] from the admin

  function partOf(el) {
    for (const part of parts) {
      try {
        if (el.closest(part.selector)) return part.id;
      } catch {
        // A selector this browser does not take: that part is not clickable here.
      }
    }
    return null;
  }

  function post(message) {
    window.parent.postMessage({ channel: CHANNEL, ...message }, ADMIN);
  }

  function sectionOf(el) {
    const section = el.closest("[data-visual-section]");
    return section ? section.getAttribute("data-visual-section") : null;
  }

  function report() {
    const sections = [...document.querySelectorAll("[data-visual-section]")].map((el) => ({
      id: el.getAttribute("data-visual-section"),
      label: el.getAttribute("data-visual-label") || el.getAttribute("data-visual-section"),
      movable: el.getAttribute("data-visual-movable") !== "false",
      hidden: el.getAttribute("data-visual-hidden") === "true",
      fields: (el.getAttribute("data-visual-fields") || "").split(" ").filter(Boolean),
    }));
    const fields = [...new Set([...document.querySelectorAll("[data-visual-field]")].map((el) => el.getAttribute("data-visual-field")))];
    post({ type: "ready", sections, fields, href: location.href });
  }

  // A click selects what it landed on; links and forms of the page do nothing
  // here (an editor clicking a menu link edits, it does not navigate away).
  document.addEventListener(
    "click",
    (event) => {
      const target = event.target instanceof Element ? event.target : null;
      if (!target) return;
      event.preventDefault();
      event.stopPropagation();
      const field = target.closest("[data-visual-field]");
      const section = sectionOf(target);
      const part = field ? null : partOf(target);
      if (part) post({ type: "select", part });
      else if (field || section) post({ type: "select", section, field: field ? field.getAttribute("data-visual-field") : null });
    },
    true,
  );
  document.addEventListener("submit", (event) => event.preventDefault(), true);

  function outline(section, field, part) {
    for (const el of document.querySelectorAll("[data-visual-selected]")) el.removeAttribute("data-visual-selected");
    let shown = null;
    if (part) {
      const el = document.querySelector(`[data-visual-part="${CSS.escape(part)}"]`);
      if (el) (shown = el).setAttribute("data-visual-selected", "section");
    }
    if (section) {
      const el = document.querySelector(`[data-visual-section="${CSS.escape(section)}"]`);
      if (el) (shown = el).setAttribute("data-visual-selected", "section");
    }
    if (field) {
      const scope = shown || document;
      const el = scope.querySelector(`[data-visual-field="${CSS.escape(field)}"]`);
      if (el) (shown = el).setAttribute("data-visual-selected", "field");
    }
    if (shown) shown.scrollIntoView({ block: "nearest" });
  }

  window.addEventListener("message", (event) => {
    if (event.source !== window.parent || event.origin !== ADMIN) return;
    const data = event.data;
    if (!data || data.channel !== CHANNEL) return;
    const text = (value) => (typeof value === "string" ? value : null);
    if (data.type === "outline") outline(text(data.section), text(data.field), text(data.part));
    if (data.type === "parts" && Array.isArray(data.parts)) {
      parts = data.parts.filter((p) => p && typeof p.id === "string" && typeof p.selector === "string");
      for (const part of parts) {
        try {
          for (const el of document.querySelectorAll(part.selector)) el.setAttribute("data-visual-part", part.id);
        } catch {
          // as above
        }
      }
    }
  });

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", report);
  else report();
})();
