// The consent screen: the authorize request is this page's own query string.
import { api, onSubmit, say } from "./common.js";
import { showScopes } from "./scopes.js";

const OAUTH = "/oauth";
const query = window.location.search;
const params = Object.fromEntries(new URLSearchParams(query));
const form = document.getElementById("consent");
const loading = document.getElementById("consent-loading");

function problem(data) {
  document.querySelector("h1").textContent = "Access cannot be allowed";
  document.title = "Access cannot be allowed · Mail";
  loading.hidden = true;
  form.hidden = true;
  say(document.getElementById("consent-error-text"), data);
  document.getElementById("consent-error").hidden = false;
}

// The server puts redirect_url on an answer only once the redirect URI is
// confirmed as the client's; before that an error stays on this page.
function follow(result) {
  if (result.data.redirect_url) return window.location.assign(result.data.redirect_url);
  problem(result.data);
}

const info = await api("GET", `${OAUTH}/authorize/info${query}`);
if (!info.ok) {
  follow(info);
} else {
  document.getElementById("client-name").textContent = info.data.client.name || info.data.client.client_id;
  document.getElementById("redirect-host").textContent = new URL(info.data.redirect_uri).host;
  showScopes(document.getElementById("scopes"), info.data.scopes);
  loading.hidden = true;
  form.hidden = false;
  document.getElementById("approve").focus();
}

onSubmit(form, async () => follow(await api("POST", `${OAUTH}/authorize/approve`, params)));
document.getElementById("deny").addEventListener("click", async () => {
  follow(await api("POST", `${OAUTH}/authorize/deny`, params));
});
