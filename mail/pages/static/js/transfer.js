// One transfer with live progress: polls the read route every second until it ends.
import { api, onSubmit, say, showError } from "./common.js";

const box = document.getElementById("transfer");
const id = box.dataset.id;
const cancel = document.getElementById("cancel");
const ACTIVE = new Set(["queued", "running"]);
const STATES = { queued: "Waiting to start", running: "Running", completed: "Completed", failed: "Failed", cancelled: "Cancelled" };
const POLL_MS = 1000;

function size(bytes) {
  const units = ["bytes", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return unit === 0 ? `${value} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}

function when(value) {
  return value ? new Date(value).toLocaleString() : "—";
}

function set(idOf, text) {
  document.getElementById(idOf).textContent = text;
}

function render(t) {
  const p = t.progress;
  set("route", `${t.source.username} at ${t.source.host} into ${t.destination}`);
  const state = document.getElementById("state");
  state.textContent = STATES[t.state] || t.state;
  state.dataset.state = t.state;
  set("transfer-error", t.error ? t.error : "");
  const bar = document.getElementById("bar");
  bar.max = Math.max(p.messages_total, 1);
  bar.value = Math.min(p.messages_done, bar.max);
  const percent = p.messages_total ? Math.floor((100 * p.messages_done) / p.messages_total) : t.state === "completed" ? 100 : 0;
  set("summary", `${percent}%: ${p.messages_done} of ${p.messages_total} messages`);
  set("folders", `${p.folders_done} of ${p.folders_total}`);
  set("messages", `${p.messages_done} of ${p.messages_total}`);
  set("bytes", `${size(p.bytes_done)} of ${size(p.bytes_total)}`);
  set("current", p.current_folder || "—");
  set("duplicates", String(p.duplicates));
  set("errors", String(p.errors));
  set("started", when(t.started_at));
  set("finished", when(t.finished_at));
  const recent = document.getElementById("recent");
  recent.replaceChildren(...p.recent_errors.map((text) => {
    const li = document.createElement("li");
    li.textContent = text;
    return li;
  }));
  document.getElementById("recent-box").hidden = p.recent_errors.length === 0;
  cancel.hidden = !ACTIVE.has(t.state);
  box.setAttribute("aria-busy", "false");
}

async function refresh() {
  const { ok, status, data } = await api("GET", `/api/transfers/${encodeURIComponent(id)}`);
  if (status === 0 || status === 429 || status >= 500) {
    // The server is restarting or busy: the transfer goes on there; ask again.
    set("transfer-error", "Could not reach the server; trying again.");
    window.setTimeout(refresh, POLL_MS * 3);
    return;
  }
  if (!ok) {
    set("route", status === 404 ? "No such transfer" : "Could not load the transfer");
    say(document.getElementById("transfer-error"), data);
    document.getElementById("progress-box").hidden = true;
    document.getElementById("facts").hidden = true;
    box.setAttribute("aria-busy", "false");
    return;
  }
  render(data);
  if (ACTIVE.has(data.state)) window.setTimeout(refresh, POLL_MS);
}

onSubmit(cancel, async () => {
  const { ok, data } = await api("DELETE", `/api/transfers/${encodeURIComponent(id)}`);
  if (!ok) {
    showError(cancel, data);
    return;
  }
  render(data);
});

refresh();
