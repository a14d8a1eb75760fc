// Building the screens' DOM without innerHTML: h("button", {type: "button", onclick}, "Save").

let counter = 0;
export function uid(prefix = "id") {
  counter += 1;
  return `${prefix}-${counter}`;
}

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "class") {
      el.className = value;
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else if (key === "value" || key === "checked" || key === "selected" || key === "indeterminate") {
      el[key] = value;
    } else if (value === true) {
      el.setAttribute(key, "");
    } else {
      el.setAttribute(key, String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// Said by screen readers through the page's polite live region.
export function announce(text) {
  const region = document.getElementById("announcer");
  region.textContent = "";
  setTimeout(() => (region.textContent = text), 50);
}

export function when(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  return date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

export function screenRoot() {
  return document.getElementById("screen");
}

export function setTitle(text) {
  document.getElementById("title").textContent = text;
  document.title = `${text} · CMS`;
}

// A status line under a form or a section: role=status, polite.
export function statusLine() {
  return h("p", { class: "status", role: "status" });
}

// A message box that reads out when it changes (errors).
export function alertBox() {
  return h("div", { class: "alert", role: "alert", hidden: true });
}

export function showAlert(box, ...content) {
  replace(box, ...content);
  box.hidden = content.length === 0;
}

// A labelled input with its help and error text wired by id.
export function labelled(label, input, { help, error } = {}) {
  const id = input.id || uid("f");
  input.id = id;
  const errorEl = h("p", { class: "field-error", id: `${id}-error`, hidden: true });
  const helpEl = help ? h("p", { class: "help", id: `${id}-help` }, help) : null;
  const described = [helpEl && helpEl.id].filter(Boolean).join(" ");
  if (described) input.setAttribute("aria-describedby", described);
  const wrap = h("div", { class: "field" }, h("label", { for: id }, label), helpEl, input, errorEl);
  if (error) setFieldError(wrap, input, error);
  return wrap;
}

export function setFieldError(wrap, input, message) {
  const errorEl = wrap.querySelector(":scope > .field-error");
  const ids = new Set((input.getAttribute("aria-describedby") || "").split(" ").filter(Boolean));
  if (message) {
    errorEl.textContent = message;
    errorEl.hidden = false;
    input.setAttribute("aria-invalid", "true");
    ids.add(errorEl.id);
    wrap.classList.add("invalid");
  } else {
    errorEl.textContent = "";
    errorEl.hidden = true;
    input.removeAttribute("aria-invalid");
    ids.delete(errorEl.id);
    wrap.classList.remove("invalid");
  }
  if (ids.size) input.setAttribute("aria-describedby", [...ids].join(" "));
  else input.removeAttribute("aria-describedby");
}

// Runs submit on the form's submit, its buttons disabled meanwhile.
export function onSubmit(form, submit) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const buttons = [...form.querySelectorAll("button")].filter((b) => !b.disabled);
    buttons.forEach((b) => (b.disabled = true));
    try {
      await submit(event);
    } finally {
      buttons.forEach((b) => (b.disabled = false));
    }
  });
}

export function button(label, onclick, attrs = {}) {
  return h("button", { type: "button", onclick, ...attrs }, label);
}

export function copyButton(getText, label = "Copy") {
  const btn = button(label, async () => {
    try {
      await navigator.clipboard.writeText(getText());
      announce("Copied to the clipboard");
      btn.textContent = "Copied";
    } catch {
      announce("Copying was not allowed: select the text and copy it");
    }
  });
  return btn;
}
