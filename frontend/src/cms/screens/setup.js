// The first visit claims the site: the first owner's account, then straight in.
import { ADMIN, api } from "../lib/api.js";
import { alertBox, h, labelled, onSubmit, screenRoot } from "../lib/dom.js";
import { Problems } from "../lib/problems.js";

const name = h("input", { name: "name", autocomplete: "name", maxlength: 200 });
const email = h("input", { name: "email", type: "email", autocomplete: "username", required: true });
const password = h("input", { name: "password", type: "password", autocomplete: "new-password", required: true, minlength: 8 });
const fields = {
  name: labelled("Your name", name),
  email: labelled("Email", email),
  password: labelled("Password", password, { help: "At least 8 characters." }),
};
const box = alertBox();
const problems = new Problems(box, (key) => {
  const wrap = fields[key];
  return wrap ? { wrap, input: wrap.querySelector("input"), label: wrap.querySelector("label").textContent } : null;
});
const form = h(
  "form",
  { class: "card narrow", novalidate: true },
  h("p", {}, "No one has signed in to this CMS yet. The account you create now owns the site: it can invite everyone else."),
  box,
  fields.name,
  fields.email,
  fields.password,
  h("button", { type: "submit", class: "primary" }, "Claim this site"),
);
onSubmit(form, async () => {
  const body = { email: email.value, password: password.value, mode: "cookie" };
  if (name.value.trim()) body.name = name.value.trim();
  const { ok, data, status } = await api("POST", "/auth/setup", body);
  if (ok) {
    location.assign(`${ADMIN}/types`);
  } else if (status === 409) {
    location.assign(`${ADMIN}/signin`);
  } else {
    problems.show(data);
  }
});
screenRoot().append(form);
