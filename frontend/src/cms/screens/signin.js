// Sign in with email and password; the session is the HttpOnly cms_session cookie.
import { api } from "../lib/api.js";
import { alertBox, h, labelled, onSubmit, screenRoot } from "../lib/dom.js";
import { Problems } from "../lib/problems.js";

const email = h("input", { name: "email", type: "email", autocomplete: "username", required: true });
const password = h("input", { name: "password", type: "password", autocomplete: "current-password", required: true });
const fields = { email: labelled("Email", email), password: labelled("Password", password) };
const box = alertBox();
const problems = new Problems(box, (key) => {
  const wrap = fields[key];
  return wrap ? { wrap, input: wrap.querySelector("input"), label: wrap.querySelector("label").textContent } : null;
});
const form = h(
  "form",
  { class: "card narrow", novalidate: true },
  box,
  fields.email,
  fields.password,
  h("button", { type: "submit", class: "primary" }, "Sign in"),
);
onSubmit(form, async () => {
  const { ok, data } = await api("POST", "/auth/login", { email: email.value, password: password.value, mode: "cookie" });
  if (ok) location.assign(document.body.dataset.next);
  else problems.show(data);
});
screenRoot().append(form);
email.focus();
