// Webmail (mail/pages/webmail.py): drives /api/mail with the svc_webmail cookie.
// Every string from a message is put in the page with textContent; the body
// itself only ever lives in the sandboxed frame (/webmail/frame/<id>).
//
// Requests are few, so a person reading fast never meets the rate limit
// (docs/mail.md, "Rate limits"): the folders are fetched once and then only
// when the live events say they changed; this page's own changes (seen,
// flagged) are drawn at once and the live event refreshes the rest; a message
// read is kept, so k back costs nothing; j/k move the selection at once and
// load at most one message per MESSAGE_EVERY_MS; messages read are marked
// seen together, in one request, once the reader pauses.
import { api, messageOf, send } from "./common.js";

const $ = (id) => document.getElementById(id);
const state = {
  me: null,
  folders: [],
  folder: null, // folder id; null before the folders load
  page: 1,
  pages: 1,
  items: [],
  current: null, // the message open in the reading pane
  selected: -1, // the list's chosen item: its index, and its message's id
  selectedId: null,
  filters: {},
  remote: false,
  compose: null, // {draft_id, reply_to_id, forward_id, dirty}
  live: null, // the mailbox states of the last live event: {email, folders}
};
const MESSAGE_EVERY_MS = 200;
const SEEN_AFTER_MS = 600;
const REFRESH_AFTER_MS = 150;
const CACHED_MESSAGES = 50;
const cache = new Map(); // message id -> the message as read (no remote content)
const seenQueue = new Set();
let seenTimer = 0;

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const child of children) node.append(child);
  return node;
}

function who(list) {
  return (list || []).map((a) => (a.name ? `${a.name} <${a.email}>` : a.email)).join(", ");
}

function when(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  const today = new Date();
  return d.toDateString() === today.toDateString()
    ? d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
    : d.toLocaleDateString();
}

function status(text) {
  $("list-status").textContent = text;
}

// --- signing in ---------------------------------------------------------------

// `me` is the sign-in's answer when there was one (it is what /api/mail/me says).
async function start(me) {
  if (!me) {
    const res = await api("GET", "/api/mail/me");
    if (!res.ok) return showSignin();
    me = res.data;
  }
  state.me = me;
  $("signin").hidden = true;
  $("app").hidden = false;
  $("me").textContent = me.email;
  await loadFolders();
  await loadList();
  listen();
}

function showSignin() {
  $("app").hidden = true;
  $("signin").hidden = false;
  $("signin-email").focus();
}

$("signin-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  $("signin-error").textContent = "";
  const button = form.querySelector("button");
  button.disabled = true;
  const res = await api("POST", "/api/mail/login", {
    email: form.elements.email.value,
    password: form.elements.password.value,
  });
  button.disabled = false;
  if (!res.ok) {
    $("signin-error").textContent = messageOf(res.data);
    return;
  }
  form.reset();
  start(res.data);
});

$("signout").addEventListener("click", async () => {
  await api("POST", "/api/mail/logout");
  if (state.events) state.events.close();
  location.reload();
});

// --- folders --------------------------------------------------------------------

async function loadFolders() {
  const res = await api("GET", "/api/mail/folders");
  if (!res.ok) return;
  state.folders = res.data.data;
  if (!state.folder || !state.folders.some((f) => f.id === state.folder)) {
    state.folder = (state.folders.find((f) => f.role === "inbox") || state.folders[0]).id;
  }
  renderFolders();
}

// Draws the folders as last fetched: choosing one, or reading, fetches nothing.
function renderFolders() {
  const list = $("folders");
  list.replaceChildren();
  const move = $("move-to");
  move.replaceChildren(el("option", { value: "" }, "Move to…"));
  for (const f of state.folders) {
    const link = el(
      "a",
      { href: `#folder=${f.id}`, "data-folder": f.id },
      el("span", { class: "name" }, f.name),
      el("span", { class: "count", "aria-label": `${f.unread} unread` }, f.unread ? String(f.unread) : ""),
    );
    if (f.id === state.folder && !state.filters.search) link.setAttribute("aria-current", "true");
    link.addEventListener("click", (event) => {
      event.preventDefault();
      state.folder = f.id;
      state.page = 1;
      state.filters = {};
      $("search").reset();
      renderFolders();
      loadList();
    });
    const item = el("li", {}, link);
    if (!f.special) {
      item.append(
        el("button", { type: "button", class: "del", "aria-label": `Delete folder ${f.name}`, onclick: () => deleteFolder(f) }, "×"),
      );
    }
    list.append(item);
    move.append(el("option", { value: f.id }, f.name));
  }
}

async function deleteFolder(folder) {
  if (!confirm(`Delete the folder ${folder.name}?`)) return;
  const res = await api("DELETE", `/api/mail/folders/${folder.id}`);
  $("folder-error").textContent = res.ok ? "" : messageOf(res.data);
  if (!res.ok) return;
  if (state.folder === folder.id) {
    // The folder shown is gone: the Inbox now, whatever the live event says.
    state.folder = null;
    await loadFolders();
    await loadList();
  } else changed({ folders: true });
}

$("new-folder").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  const res = await api("POST", "/api/mail/folders", { name: form.elements.name.value });
  $("folder-error").textContent = res.ok ? "" : messageOf(res.data);
  if (res.ok) {
    form.reset();
    changed({ folders: true });
  }
});

// --- the list -------------------------------------------------------------------

async function loadList() {
  const query = new URLSearchParams({ page: String(state.page), per_page: "50" });
  const f = state.filters;
  if (f.search) query.set("search", f.search);
  else if (state.folder) query.set("folder_id", state.folder);
  if (f.unread) query.set("unread", "true");
  if (f.flagged) query.set("flagged", "true");
  if (f.attachment) query.set("has_attachment", "true");
  const res = await api("GET", `/api/mail/messages?${query}`);
  if (!res.ok) {
    if (res.status === 401) return showSignin();
    status(messageOf(res.data));
    return;
  }
  const folder = state.folders.find((x) => x.id === state.folder);
  $("list-title").textContent = f.search ? `Search: ${f.search}` : folder ? folder.name : "Messages";
  state.items = res.data.data;
  // The selection follows its message when the list moves around it (a refresh
  // while j/k are pressed), so the message loading next is still the one chosen.
  if (state.selectedId) state.selected = state.items.findIndex((x) => x.id === state.selectedId);
  state.pages = Math.max(1, res.data.pages);
  $("page-info").textContent = `${res.data.total} message${res.data.total === 1 ? "" : "s"} · page ${state.page} of ${state.pages}`;
  $("prev").disabled = state.page <= 1;
  $("next").disabled = state.page >= state.pages;
  const empty = "No messages here.";
  if (!state.items.length) status(empty);
  else if ($("list-status").textContent === empty) status("");
  renderList();
}

function renderList() {
  const list = $("messages");
  list.replaceChildren();
  state.items.forEach((m, i) => {
    const unread = !m.flags.includes("seen");
    const button = el(
      "button",
      { type: "button", "data-id": m.id },
      el("span", { class: "meta" }, `${m.flags.includes("flagged") ? "★ " : ""}${m.has_attachment ? "📎 " : ""}${when(m.received_at)}`),
      el("span", { class: "from" }, who(m.from) || "(no sender)"),
      el("span", { class: "subject" }, m.subject || "(no subject)"),
      el("span", { class: "preview" }, m.preview),
    );
    if (m.id === state.selectedId) button.setAttribute("aria-current", "true");
    button.addEventListener("click", () => openMessage(i));
    list.append(el("li", { class: unread ? "unread" : "" }, button));
  });
}

$("prev").addEventListener("click", () => {
  state.page -= 1;
  loadList();
});
$("next").addEventListener("click", () => {
  state.page += 1;
  loadList();
});

$("search").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.target;
  state.filters = {
    search: form.elements.q.value.trim(),
    unread: form.elements.unread.checked,
    flagged: form.elements.flagged.checked,
    attachment: form.elements.attachment.checked,
  };
  state.page = 1;
  renderFolders();
  loadList();
});

// --- reading --------------------------------------------------------------------

// Selects a message of the list and shows it. Moving along the list (j/k) is
// drawn at once; the message itself is fetched at most once per
// MESSAGE_EVERY_MS, the newest selection winning, and never twice (cache).
let loading = null; // the fetch under way
let lastLoad = 0;
let loadTimer = 0;

function openMessage(index) {
  const summary = state.items[index];
  if (!summary) return;
  state.selected = index;
  state.selectedId = summary.id;
  state.remote = false;
  markSelected();
  clearTimeout(loadTimer);
  const due = lastLoad + MESSAGE_EVERY_MS - Date.now();
  if (loading || due > 0) loadTimer = setTimeout(() => openMessage(state.selected), Math.max(due, 20));
  else showSelected(summary);
}

async function showSelected(summary) {
  lastLoad = Date.now();
  loading = showMessage(summary.id);
  await loading;
  loading = null;
  if (!summary.flags.includes("seen") && state.current && state.current.id === summary.id) markSeen(summary);
}

// The list's current item, without redrawing it.
function markSelected() {
  $("messages").querySelectorAll("button[data-id]").forEach((b) => {
    if (b.dataset.id === state.selectedId) b.setAttribute("aria-current", "true");
    else b.removeAttribute("aria-current");
  });
}

// Seen now on the page; told to the server with the others read meanwhile.
function markSeen(summary) {
  summary.flags.push("seen");
  if (state.current && state.current.id === summary.id) state.current.flags.push("seen");
  for (const folder of state.folders) {
    if ((summary.folder_ids || []).includes(folder.id) && folder.unread > 0) folder.unread -= 1;
  }
  renderFolders();
  const item = $("messages").querySelector(`button[data-id="${summary.id}"]`);
  if (item) item.parentElement.classList.remove("unread");
  seenQueue.add(summary.id);
  clearTimeout(seenTimer);
  seenTimer = setTimeout(flushSeen, SEEN_AFTER_MS);
}

async function flushSeen() {
  const ids = [...seenQueue];
  seenQueue.clear();
  if (ids.length) await api("POST", "/api/mail/messages/flags", { ids, seen: true });
}

// Leaving (or reloading) before the pause: the page's last request outlives it.
window.addEventListener("pagehide", () => {
  if (!seenQueue.size) return;
  clearTimeout(seenTimer);
  fetch("/api/mail/messages/flags", {
    method: "POST",
    keepalive: true,
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify({ ids: [...seenQueue], seen: true }),
  });
  seenQueue.clear();
});

async function showMessage(id) {
  let m = state.remote ? null : cache.get(id);
  if (!m) {
    const res = await api("GET", `/api/mail/messages/${id}${state.remote ? "?remote_content=true" : ""}`);
    if (!res.ok) {
      status(messageOf(res.data));
      return;
    }
    m = res.data;
    if (!state.remote) {
      cache.set(id, m);
      if (cache.size > CACHED_MESSAGES) cache.delete(cache.keys().next().value);
    }
  }
  state.current = m;
  $("reader").hidden = false;
  document.querySelector(".wm-body").classList.add("reading");
  $("read-subject").textContent = m.subject || "(no subject)";
  $("read-from").textContent = who(m.from);
  $("read-to").textContent = who([...m.to, ...m.cc]);
  $("read-date").textContent = m.received_at ? new Date(m.received_at).toLocaleString() : "";
  $("remote-note").hidden = !m.remote_content_blocked;
  showFlag(m);
  $("raw-link").href = `/api/mail/messages/${m.id}/raw`;
  $("read-body").src = `/webmail/frame/${m.id}${state.remote ? "?remote_content=true" : ""}`;
  const list = $("attachments");
  list.replaceChildren();
  for (const a of m.attachments) {
    const size = a.size ? ` (${Math.ceil(a.size / 1024)} KB)` : "";
    list.append(el("li", {}, el("a", { href: `${a.url}?download=true`, download: a.name || "" }, `${a.name || "attachment"}${size}`)));
  }
}

function showFlag(m) {
  document.querySelector('[data-action="flag"]').setAttribute("aria-pressed", String(m.flags.includes("flagged")));
}

$("show-remote").addEventListener("click", () => {
  state.remote = true;
  if (state.current) showMessage(state.current.id);
});

async function act(action) {
  const m = state.current;
  if (!m) return;
  if (action === "reply" || action === "reply-all" || action === "forward") return openCompose(action, m);
  await flushSeen(); // in order: a message read then marked unread ends unread
  if (action === "flag") {
    const on = !m.flags.includes("flagged");
    const res = await api("POST", "/api/mail/messages/flags", { ids: [m.id], flagged: on });
    if (!res.ok) return status(messageOf(res.data));
    // Drawn now; the live event brings the list and the folders.
    m.flags = on ? [...m.flags, "flagged"] : m.flags.filter((f) => f !== "flagged");
    showFlag(m);
  } else if (action === "unread") {
    const res = await api("POST", "/api/mail/messages/flags", { ids: [m.id], seen: false });
    if (!res.ok) return status(messageOf(res.data));
    m.flags = m.flags.filter((f) => f !== "seen");
  } else if (action === "delete") {
    const res = await api("POST", "/api/mail/messages/delete", { ids: [m.id] });
    if (!res.ok) return status(messageOf(res.data));
    closeReader();
  } else if (action === "archive") {
    const archive = state.folders.find((f) => f.role === "archive");
    if (archive) await api("POST", "/api/mail/messages/move", { ids: [m.id], folder_id: archive.id });
    closeReader();
  }
  changed({ folders: true, list: true });
}

function closeReader() {
  state.current = null;
  $("reader").hidden = true;
  document.querySelector(".wm-body").classList.remove("reading");
}

document.querySelectorAll("[data-action]").forEach((b) => b.addEventListener("click", () => act(b.dataset.action)));

$("move-to").addEventListener("change", async (event) => {
  const target = event.target.value;
  if (!target || !state.current) return;
  await api("POST", "/api/mail/messages/move", { ids: [state.current.id], folder_id: target });
  event.target.value = "";
  closeReader();
  changed({ folders: true, list: true });
});

// --- composing ------------------------------------------------------------------

const dialog = $("compose");
const composeForm = $("compose-form");
let autosave = null;

function quote(m) {
  const lines = (m.text || "").split("\n").map((l) => `> ${l}`);
  return `\n\nOn ${new Date(m.received_at).toLocaleString()}, ${who(m.from)} wrote:\n${lines.join("\n")}`;
}

function openCompose(kind, m) {
  composeForm.reset();
  $("compose-error").textContent = "";
  $("draft-status").textContent = "";
  $("c-carried").replaceChildren();
  state.compose = { draft_id: null, reply_to_id: null, forward_id: null, dirty: false };
  const f = composeForm.elements;
  $("compose-title").textContent = "New message";
  if (m && (kind === "reply" || kind === "reply-all")) {
    const mine = state.me.email.toLowerCase();
    const to = m.reply_to.length ? m.reply_to : m.from;
    f.to.value = who(to);
    if (kind === "reply-all") f.cc.value = who([...m.to, ...m.cc].filter((a) => a.email.toLowerCase() !== mine));
    f.subject.value = /^re:/i.test(m.subject) ? m.subject : `Re: ${m.subject}`;
    f.text.value = quote(m);
    state.compose.reply_to_id = m.id;
    $("compose-title").textContent = "Reply";
  } else if (m && kind === "forward") {
    f.subject.value = /^fwd?:/i.test(m.subject) ? m.subject : `Fwd: ${m.subject}`;
    f.text.value = `\n\n---------- Forwarded message ----------\nFrom: ${who(m.from)}\nSubject: ${m.subject}\n\n${m.text || ""}`;
    state.compose.forward_id = m.id;
    for (const a of m.attachments) $("c-carried").append(el("li", {}, `Attached: ${a.name || "attachment"}`));
    $("compose-title").textContent = "Forward";
  }
  dialog.showModal();
  (f.to.value ? f.text : f.to).focus();
  if (f.text === document.activeElement) f.text.setSelectionRange(0, 0);
  clearInterval(autosave);
  autosave = setInterval(() => state.compose && state.compose.dirty && saveDraft(), 5000);
}

function composeBody() {
  const f = composeForm.elements;
  const message = { to: f.to.value, cc: f.cc.value, bcc: f.bcc.value, subject: f.subject.value, text: f.text.value };
  for (const key of ["draft_id", "reply_to_id", "forward_id"]) if (state.compose[key]) message[key] = state.compose[key];
  const data = new FormData();
  data.append("message", JSON.stringify(message));
  for (const file of f.attachments.files) data.append("attachments", file, file.name);
  return data;
}

function post(path, body) {
  return send(path, { method: "POST", body, headers: { Accept: "application/json" } });
}

async function saveDraft() {
  if (!state.compose) return;
  state.compose.dirty = false;
  const body = composeBody();
  const res = await post("/api/mail/drafts", body);
  if (!res.ok) {
    $("compose-error").textContent = messageOf(res.data);
    return;
  }
  // The files now live in the draft: the next save carries them over by draft_id.
  if (composeForm.elements.attachments.files.length) {
    for (const file of composeForm.elements.attachments.files) $("c-carried").append(el("li", {}, `Attached: ${file.name}`));
    composeForm.elements.attachments.value = "";
  }
  state.compose.draft_id = res.data.id;
  state.compose.forward_id = null;
  $("draft-status").textContent = `Draft saved at ${new Date().toLocaleTimeString()}`;
}

composeForm.addEventListener("input", () => {
  if (state.compose) state.compose.dirty = true;
});
$("save-draft").addEventListener("click", saveDraft);
$("discard").addEventListener("click", () => {
  clearInterval(autosave);
  state.compose = null;
  dialog.close();
});
dialog.addEventListener("close", () => clearInterval(autosave));

composeForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  $("compose-error").textContent = "";
  const button = $("send-button");
  button.disabled = true;
  clearInterval(autosave);
  const res = await post("/api/mail/send", composeBody());
  button.disabled = false;
  if (!res.ok) {
    $("compose-error").textContent = messageOf(res.data);
    return;
  }
  state.compose = null;
  dialog.close();
  status("Message sent.");
  changed({ folders: true, list: true });
});

$("compose-button").addEventListener("click", () => openCompose("new"));
$("help-button").addEventListener("click", () => $("help").showModal());

// --- keyboard -------------------------------------------------------------------

document.addEventListener("keydown", (event) => {
  if ($("app").hidden || event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  if (target.closest && target.closest("input, textarea, select, dialog[open]")) return;
  const keys = {
    j: () => openMessage(Math.min(state.selected + 1, state.items.length - 1)),
    k: () => openMessage(Math.max(state.selected - 1, 0)),
    o: () => openMessage(Math.max(state.selected, 0)),
    Enter: () => openMessage(Math.max(state.selected, 0)),
    c: () => openCompose("new"),
    r: () => act("reply"),
    a: () => act("reply-all"),
    f: () => act("forward"),
    s: () => act("flag"),
    u: () => act("unread"),
    e: () => act("archive"),
    "#": () => act("delete"),
    Delete: () => act("delete"),
    "/": () => $("search-q").focus(),
    "?": () => $("help").showModal(),
  };
  const run = keys[event.key];
  if (run && !(event.key === "Enter" && target.tagName === "BUTTON")) {
    event.preventDefault();
    run();
  }
});

// --- live updates ---------------------------------------------------------------

function listen() {
  if (!window.EventSource || state.events) return;
  const events = new EventSource("/api/mail/events");
  state.events = events;
  // Each event carries the mailbox's states; only what moved is fetched again.
  const follow = (now) => {
    const last = state.live;
    state.live = now;
    if (last) refresh({ folders: last.folders !== now.folders, list: last.email !== now.email });
  };
  events.addEventListener("ready", (event) => {
    follow(JSON.parse(event.data)); // after a reconnect: what changed meanwhile
    document.body.dataset.live = "ready";
  });
  events.addEventListener("change", (event) => follow(JSON.parse(event.data)));
  events.addEventListener("error", () => delete document.body.dataset.live);
}

// After this page changed the mailbox: the live event refreshes what moved;
// without one (no EventSource, or the stream is down), refresh here.
function changed(what) {
  if (document.body.dataset.live !== "ready") refresh(what);
}

// Refreshes coalesce: a burst of changes (a delivery of ten) costs one fetch of each.
const pending = { folders: false, list: false };
let refreshTimer = 0;

function refresh(what) {
  pending.folders ||= what.folders;
  pending.list ||= what.list;
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(async () => {
    const { folders, list } = pending;
    pending.folders = pending.list = false;
    if (list) cache.clear(); // flags and folders of messages kept may have moved
    if (folders) await loadFolders();
    if (list) await loadList();
  }, REFRESH_AFTER_MS);
}

start();
