// Small forms the management screens share: a form whose named inputs take
// the API's errors, and a secret shown exactly once with a copy button.
import { alertBox, copyButton, h, labelled, replace } from "./dom.js";
import { Problems } from "./problems.js";

// inputs: {key: [label, element, help?]}; returns {form, wraps, problems, body}
export function apiForm(inputs, submitLabel, attrs = {}) {
  const wraps = {};
  for (const [key, [label, input, help]] of Object.entries(inputs)) {
    if (input.type === "checkbox") {
      input.id = input.id || `${key}-${Math.random().toString(36).slice(2, 8)}`;
      wraps[key] = h("div", { class: "field" }, h("div", { class: "check" }, input, h("label", { for: input.id }, label)), h("p", { class: "field-error", id: `${input.id}-error`, hidden: true }));
    } else {
      wraps[key] = labelled(label, input, { help });
    }
  }
  const box = alertBox();
  const problems = new Problems(box, (key) => {
    const head = key.split(".")[0];
    const wrap = wraps[key] || wraps[head];
    if (!wrap) return null;
    return { wrap, input: inputs[wraps[key] ? key : head][1], label: inputs[wraps[key] ? key : head][0] };
  });
  const status = h("p", { class: "status", role: "status" });
  const form = h("form", { class: "card", novalidate: true, ...attrs }, box, Object.values(wraps), h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, submitLabel), status));
  return { form, wraps, problems, status, box };
}

// The one time a key or secret is shown: copy it now, it is never shown again.
export function showOnce(container, what, value) {
  const code = h("code", { class: "secret", id: "secret-value", tabindex: 0 }, value);
  replace(
    container,
    h(
      "div",
      { class: "notice", role: "alert" },
      h("p", {}, h("strong", {}, `Your new ${what}. `), "Copy it now: it is shown only this once and cannot be read again."),
      code,
      h("div", { class: "actions" }, copyButton(() => value, `Copy the ${what}`)),
    ),
  );
  code.focus();
}
