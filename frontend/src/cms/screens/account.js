// Your account: your name and email, a new password (the current one asked
// again; every other session ends), the sessions signed in as you (end any
// but this one), and a link to your agent keys.
import "../lib/shell.js";
import { ADMIN, api, messageOf } from "../lib/api.js";
import { announce, button, h, replace, screenRoot, when } from "../lib/dom.js";
import { apiForm } from "../lib/forms.js";
import { cells, table } from "../lib/table.js";

const root = screenRoot();
const sessions = h("section", { class: "card", "aria-labelledby": "sessions-h" });
const value = (form, key) => form.wraps[key].querySelector("input").value;

const profile = apiForm(
  {
    name: ["Name", h("input", { type: "text", autocomplete: "name", maxlength: 200 })],
    email: ["Email", h("input", { type: "email", autocomplete: "email" })],
    currentPassword: ["Current password", h("input", { type: "password", autocomplete: "current-password" }), "Needed only to change the email."],
  },
  "Save your details",
  { "aria-labelledby": "profile-h" },
);
profile.form.prepend(h("h2", { id: "profile-h" }, "Your details"));

const password = apiForm(
  {
    currentPassword: ["Current password", h("input", { type: "password", autocomplete: "current-password" })],
    password: ["New password", h("input", { type: "password", autocomplete: "new-password", minlength: 8 }), "At least 8 characters. Your other sessions are signed out."],
    repeat: ["New password again", h("input", { type: "password", autocomplete: "new-password" })],
  },
  "Change the password",
  { "aria-labelledby": "password-h" },
);
password.form.prepend(h("h2", { id: "password-h" }, "Password"));

let me = null;
profile.form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const body = { name: value(profile, "name").trim() };
  const email = value(profile, "email").trim();
  if (email !== me.email) {
    body.email = email;
    body.currentPassword = value(profile, "currentPassword");
  }
  const { ok, data } = await api("PATCH", "/auth/me", body);
  profile.wraps.currentPassword.querySelector("input").value = "";
  if (!ok) return profile.problems.show(data);
  profile.problems.clear();
  me = data;
  profile.status.textContent = "Saved.";
  announce("Your details were saved");
});

password.form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const fresh = value(password, "password");
  if (fresh !== value(password, "repeat")) return password.problems.show({ details: { fields: [{ key: "repeat", message: "does not match the new password" }] } });
  const { ok, data } = await api("PATCH", "/auth/me", { password: fresh, currentPassword: value(password, "currentPassword") });
  for (const wrap of Object.values(password.wraps)) wrap.querySelector("input").value = "";
  if (!ok) return password.problems.show(data);
  password.problems.clear();
  password.status.textContent = "The password was changed; your other sessions were signed out.";
  announce(password.status.textContent);
  loadSessions();
});

async function loadSessions() {
  const { ok, data } = await api("GET", "/auth/sessions");
  if (!ok) return replace(sessions, h("h2", { id: "sessions-h" }, "Where you are signed in"), h("p", { class: "alert", role: "alert" }, messageOf(data)));
  replace(
    sessions,
    h("h2", { id: "sessions-h" }, "Where you are signed in"),
    table(
      "Your sessions",
      ["Browser", "Address", "Signed in", "Ends", "Sign out"],
      data.data.map((s) =>
        cells(
          s.userAgent || "unknown",
          s.ip || "",
          when(s.createdAt),
          when(s.expiresAt),
          s.current
            ? h("strong", {}, "This session")
            : button("Sign out", async () => {
                const result = await api("DELETE", `/auth/sessions/${s.id}`);
                announce(result.ok ? "That session was signed out" : messageOf(result.data));
                loadSessions();
              }, { class: "small", "aria-label": `Sign out the session from ${when(s.createdAt)}` }),
        ),
      ),
    ),
  );
}

replace(
  root,
  profile.form,
  password.form,
  sessions,
  h("section", { class: "card", "aria-labelledby": "keys-h" }, h("h2", { id: "keys-h" }, "Agent keys"), h("p", {}, "Programs acting for you use agent keys, each capped by your role. ", h("a", { href: `${ADMIN}/keys` }, "Your agent keys"))),
);
const { ok, data } = await api("GET", "/auth/me");
if (ok) {
  me = data.user;
  profile.wraps.name.querySelector("input").value = me.name || "";
  profile.wraps.email.querySelector("input").value = me.email;
}
loadSessions();
