// Device pairing: find the waiting request by its code, then allow or deny it.
import { api, onSubmit, showError } from "./common.js";
import { showScopes } from "./scopes.js";

const OAUTH = "/oauth";
const codeForm = document.getElementById("pair-code");
const decide = document.getElementById("pair-decide");
const done = document.getElementById("pair-done");
let userCode = "";

async function look(code) {
  const { ok, data } = await api("GET", `${OAUTH}/device/info?${new URLSearchParams({ user_code: code })}`);
  if (!ok) return showError(codeForm, data, "user_code");
  userCode = data.user_code;
  document.getElementById("client-name").textContent = data.client.name || data.client.client_id;
  document.getElementById("shown-code").textContent = data.user_code;
  showScopes(document.getElementById("scopes"), data.scopes);
  codeForm.hidden = true;
  decide.hidden = false;
  document.getElementById("approve").focus();
}

async function answer(verb) {
  const { ok, data } = await api("POST", `${OAUTH}/device/${verb}`, { user_code: userCode });
  decide.hidden = true;
  done.hidden = false;
  if (!ok) {
    done.textContent = data.error_description || "This code can no longer be used.";
  } else if (data.status === "approved") {
    done.textContent = "Done. Your device is connected; you can go back to it.";
  } else {
    done.textContent = "Denied. The device was not connected.";
  }
  done.focus();
}

onSubmit(codeForm, () => look(codeForm.elements.namedItem("user_code").value.trim()));
onSubmit(decide, () => answer("approve"));
document.getElementById("deny").addEventListener("click", () => answer("deny"));

const arrived = codeForm.elements.namedItem("user_code").value.trim();
if (arrived) look(arrived);
