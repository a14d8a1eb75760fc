// Networks and accounts (admins): each network's app (client id, the secret
// shown only as its last four characters, enabled, endpoint overrides) with
// the API's walkthrough and where the credentials come from; its accounts
// with their attention state, Disconnect, and Connect: a consent URL the
// whole window goes to (the callback brings it back here), or an app
// password, or a Mastodon instance's address.
import "../lib/shell.js";
import { api, messageOf } from "../lib/api.js";
import { announce, button, copyButton, h, replace, screenRoot, when } from "../lib/dom.js";
import { apiForm } from "../lib/forms.js";
import { consentOutcome, socialNav } from "../lib/social.js";
import { cells, table } from "../lib/table.js";

const root = screenRoot();
const notice = h("div");
const list = h("div");
replace(root, socialNav("/settings"), notice, list);
consentOutcome(notice);

const SOURCES = {
  settings: "Stored here (the app below).",
  environment: "From the environment (SOCIAL_OAUTH_<NETWORK>_*): saving the app here takes over.",
  none: "None yet: register an app with the network and enter it below.",
  "not needed": "Nothing to register for this network.",
};

async function load() {
  const [settings, accounts] = await Promise.all([api("GET", "/social/settings"), api("GET", "/social/accounts")]);
  if (!settings.ok || !accounts.ok) {
    replace(list, h("p", { class: "alert", role: "alert" }, messageOf((settings.ok ? accounts : settings).data)));
    return;
  }
  const byNetwork = Object.fromEntries(accounts.data.data.map((a) => [a.network, a]));
  replace(list, summary(settings.data.data, byNetwork), settings.data.data.map((app) => section(app, byNetwork[app.network])));
  if (location.hash) document.getElementById(location.hash.slice(1))?.focus();
}

// One line per network first: what is set up, what is connected, what needs attention.
function summary(apps, byNetwork) {
  return table(
    "Networks at a glance",
    ["Network", "Credentials", "Accounts", "Attention"],
    apps.map((app) => {
      const accounts = byNetwork[app.network] ? byNetwork[app.network].accounts : [];
      const broken = accounts.filter((a) => a.needsAttention);
      return cells(
        h("a", { href: `#network-${app.network}` }, app.label),
        { settings: "stored here", environment: "environment", none: "none yet", "not needed": "not needed" }[app.source] || app.source,
        accounts.length ? accounts.map((a) => `@${a.handle}`).join(", ") : "none",
        broken.length ? h("span", { class: "attention-text" }, broken.map((a) => `@${a.handle} needs attention`).join(", ")) : "none",
      );
    }),
  );
}

function section(app, accounts) {
  const id = `network-${app.network}`;
  const oauth = app.connect === "oauth";
  return h(
    "section",
    { class: "card network", id, "aria-labelledby": `${id}-h` },
    h("h2", { id: `${id}-h` }, app.label),
    h("p", {}, h("strong", {}, "Credentials: "), SOURCES[app.source] || app.source, app.envFallback && app.source !== "environment" ? h("span", { class: "muted" }, ` SOCIAL_OAUTH_${app.network.toUpperCase()}_* is read when no app is stored.`) : null),
    h("h3", {}, "How to set it up"),
    h("ol", { class: "walkthrough" }, app.walkthrough.map((step) => h("li", {}, step))),
    oauth
      ? h("div", { class: "field" }, h("span", { class: "label" }, "Callback URL to register"), h("code", { class: "secret" }, app.callbackUrl), h("div", { class: "actions" }, copyButton(() => app.callbackUrl, `Copy the ${app.label} callback URL`)))
      : null,
    accountsPart(app, accounts),
    appForm(app),
  );
}

function accountsPart(app, info) {
  const rows = (info ? info.accounts : []).map((a) =>
    h(
      "li",
      { id: `account-${a.id}`, tabindex: -1, class: a.needsAttention ? "attention" : null },
      h("strong", {}, `@${a.handle}`),
      a.name && a.name !== a.handle ? ` (${a.name})` : "",
      a.needsAttention ? h("span", { class: "attention-text" }, ` Needs attention since ${when(a.attentionSince)}: ${a.attention}. Connect it again to fix it.`) : h("span", { class: "muted" }, ` connected ${when(a.connectedAt)}`),
      " ",
      button("Disconnect", async () => {
        if (!window.confirm(`Disconnect ${app.label} @${a.handle}? Posts not yet sent to it lose this account.`)) return;
        const { ok, data } = await api("DELETE", `/social/accounts/${a.id}`);
        announce(ok ? `${app.label} @${a.handle} was disconnected` : messageOf(data));
        load();
      }, { class: "small danger", "aria-label": `Disconnect ${app.label} @${a.handle}` }),
    ),
  );
  return h(
    "div",
    {},
    h("h3", {}, "Accounts"),
    rows.length ? h("ul", { class: "accounts" }, rows) : h("p", { class: "muted" }, "No account connected."),
    connectPart(app, info),
  );
}

function connectPart(app, info) {
  if (!app.supported) return h("p", { class: "muted" }, `Connecting ${app.label} accounts is not available yet; its rules are checked on posts.`);
  if (app.connect === "app_password") {
    const f = apiForm(
      {
        identifier: ["Handle or email", h("input", { type: "text", autocomplete: "off" })],
        password: ["App password", h("input", { type: "password", autocomplete: "new-password" }), "An app password from Settings, App passwords: never your account password."],
        service: ["Service address (optional)", h("input", { type: "url", placeholder: "https://bsky.social" })],
      },
      `Connect ${app.label}`,
      { "aria-label": `Connect a ${app.label} account` },
    );
    f.form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const value = (k) => f.wraps[k].querySelector("input").value.trim();
      const body = { identifier: value("identifier"), password: f.wraps.password.querySelector("input").value };
      if (value("service")) body.service = value("service");
      const { ok, data } = await api("POST", `/social/accounts/${app.network}/start`, body);
      if (!ok) return f.problems.show(data);
      announce(`${app.label} @${data.account.handle} is connected`);
      load();
    });
    return f.form;
  }
  if (info && !info.hasApp) return h("p", { class: "muted" }, `Save the ${app.label} app below first, then connect accounts.`);
  const inputs = app.connect === "instance" ? { instance: ["Instance address", h("input", { type: "url", placeholder: "https://mastodon.social" })] } : {};
  const f = apiForm(inputs, `Connect ${app.label}`, { "aria-label": `Connect a ${app.label} account` });
  f.form.prepend(h("p", { class: "muted" }, `You will approve on ${app.label}; it brings you back here.`));
  f.form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { returnTo: location.pathname };
    if (f.wraps.instance) body.instance = f.wraps.instance.querySelector("input").value.trim();
    const { ok, data } = await api("POST", `/social/accounts/${app.network}/start`, body);
    if (!ok) return f.problems.show(data);
    f.status.textContent = `Opening ${app.label}…`;
    // The consent is a top-level navigation: the network's page cannot load in a frame.
    window.top.location.assign(data.url);
  });
  return f.form;
}

function appForm(app) {
  const oauth = app.connect === "oauth";
  const clientId = h("input", { type: "text", value: app.clientId || "", autocomplete: "off" });
  const secret = h("input", { type: "password", autocomplete: "new-password" });
  const clear = h("input", { type: "checkbox" });
  // A network with no app yet reads as not enabled; the app being entered is meant to be used.
  const enabled = h("input", { type: "checkbox", checked: app.enabled || app.source === "none" });
  const endpoint = (name) => h("input", { type: "url", value: (app.endpoints || {})[name] || "", placeholder: "the network's own address" });
  const stored = app.secret ? `Stored: ${app.secret} (its last four characters). Leave empty to keep it.` : "No secret stored.";
  const inputs = {
    ...(oauth ? { clientId: ["Client ID", clientId], clientSecret: ["Client secret", secret, stored], clear: ["Clear the stored secret", clear] } : {}),
    enabled: [`Enabled (${app.label} can be used)`, enabled],
    "endpoints.authorize": ["Authorize URL override", endpoint("authorize")],
    "endpoints.token": ["Token URL override", endpoint("token")],
    "endpoints.api": ["API URL override", endpoint("api")],
  };
  const f = apiForm(inputs, `Save the ${app.label} app`, { "aria-label": `${app.label} app` });
  f.form.classList.remove("card");
  if (!app.secret && f.wraps.clear) f.wraps.clear.hidden = true;
  const overrides = h("details", { class: "overrides" }, h("summary", {}, "Endpoint overrides (a local server or a proxy)"), f.wraps["endpoints.authorize"], f.wraps["endpoints.token"], f.wraps["endpoints.api"]);
  f.wraps.enabled.after(overrides);
  if (Object.values(app.endpoints || {}).some(Boolean)) overrides.open = true;
  const described = oauth ? (app.clientId ? `client ID ${app.clientId}${app.secret ? `, secret ${app.secret}` : ", no secret"}` : "no client ID yet") : "endpoint overrides";
  const wrapper = h("details", { class: "app card" }, h("summary", {}, h("strong", {}, "App settings"), ` (${described})`), f.form);
  if (app.source === "settings") {
    f.form.querySelector(".actions").append(
      button("Forget the app", async () => {
        if (!window.confirm(`Forget the ${app.label} app? Connected accounts keep working until their tokens lapse.`)) return;
        const { ok, data } = await api("DELETE", `/social/settings/${app.network}`);
        announce(ok ? `The ${app.label} app was forgotten` : messageOf(data));
        load();
      }, { class: "danger" }),
    );
  }
  f.form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { enabled: enabled.checked, endpoints: {} };
    for (const name of ["authorize", "token", "api"]) body.endpoints[name] = f.wraps[`endpoints.${name}`].querySelector("input").value.trim() || null;
    if (oauth) {
      body.clientId = clientId.value.trim();
      // Absent keeps the stored secret; an empty string clears it.
      if (clear.checked) body.clientSecret = "";
      else if (secret.value) body.clientSecret = secret.value;
    }
    const { ok, data } = await api("PUT", `/social/settings/${app.network}`, body);
    if (!ok) return f.problems.show(data);
    f.problems.clear();
    replace(notice, h("p", { class: "notice", role: "status" }, `The ${app.label} app was saved.`));
    await load();
    document.getElementById(`network-${app.network}-h`)?.scrollIntoView();
  });
  return wrapper;
}

await load();
