// The transfers screen: start one (then go to its page), and the list.
import { api, onSubmit, say, showError } from "./common.js";

const form = document.getElementById("start");
const select = document.getElementById("address_id");
const table = document.getElementById("transfers");
const STATES = { queued: "Waiting", running: "Running", completed: "Done", failed: "Failed", cancelled: "Cancelled" };

export function stateLabel(state) {
  return STATES[state] || state;
}

async function loadDestinations() {
  const { ok, data } = await api("GET", "/api/transfers/destinations");
  select.replaceChildren();
  if (!ok || !data.data.length) {
    const option = new Option(ok ? "No address yet: add one to a domain first" : "Could not load the addresses", "");
    select.append(option);
    return;
  }
  for (const d of data.data) {
    const option = new Option(d.active_transfer_id ? `${d.email} (a transfer is running)` : d.email, d.address_id);
    select.append(option);
  }
}

async function loadList() {
  const { ok, data } = await api("GET", "/api/transfers?per_page=50");
  const body = table.querySelector("tbody");
  if (!ok) {
    say(document.getElementById("list-error"), data);
    return;
  }
  body.replaceChildren();
  for (const t of data.data) {
    const row = body.insertRow();
    const link = document.createElement("a");
    link.href = `/transfers/${t.id}`;
    link.textContent = t.destination;
    row.insertCell().append(link);
    row.insertCell().textContent = `${t.source.username} at ${t.source.host}`;
    row.insertCell().textContent = stateLabel(t.state);
    row.insertCell().textContent = `${t.progress.messages_done} of ${t.progress.messages_total}`;
    row.insertCell().textContent = t.started_at ? new Date(t.started_at).toLocaleString() : "not yet";
  }
  table.hidden = data.data.length === 0;
  document.getElementById("empty").hidden = data.data.length !== 0;
}

onSubmit(form, async () => {
  const body = {};
  for (const name of ["address_id", "host", "tls", "username", "password"]) {
    const value = form.elements.namedItem(name).value;
    if (value !== "") body[name] = name === "host" ? value.trim() : value;
  }
  const port = form.elements.namedItem("port").value.trim();
  if (port !== "") {
    if (!/^[0-9]{1,5}$/.test(port)) {
      showError(form, { message: "port must be a number from 1 to 65535" }, "port");
      return;
    }
    body.port = Number(port);
  }
  const { ok, data } = await api("POST", "/api/transfers", body);
  if (!ok) {
    showError(form, data);
    return;
  }
  window.location.assign(`/transfers/${data.id}`);
});

loadDestinations();
loadList();
