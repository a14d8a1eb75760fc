// The assistant's tray, on every signed-in screen (lib/shell.js loads it): the
// person's own conversations, a message box, the answer streamed as it comes
// (server-sent events over a POST, lib/sse.js), and each proposal as a diff
// card with Apply and Dismiss. A card the API refuses (stale, no longer
// permitted) is greyed with the reason; the rest of the tray stays usable.
import { diffLines, diffWords } from "diff";
import { ADMIN, api, can, messageOf, query } from "./api.js";
import { announce, button, copyButton, h, replace, uid } from "./dom.js";
import { choose, openEditor } from "./editing.js";
import { postStream } from "./sse.js";

// Refusals that make a proposal unusable for good: grey the card.
const FINAL = new Set(["PROPOSAL_STALE", "PROPOSAL_NOT_PERMITTED", "PROPOSAL_DECIDED", "FORBIDDEN", "NOT_FOUND"]);

let panel;
let toggle;
let log;
let picker;
let message;
let sendButton;
let stopButton;
let statusLine;
let conversation = null; // id of the conversation shown
let running = null; // AbortController of the turn streaming now
let loaded = false;
const KEEP = "cms-assistant-tray";

function setup() {
  const who = document.querySelector(".top .who");
  if (!who || !can("content.read")) return;
  toggle = h("button", { type: "button", id: "assistant-toggle", "aria-expanded": "false", "aria-controls": "assistant-tray" }, "Assistant");
  who.prepend(toggle);
  picker = h("select", { id: "assistant-conversation" });
  picker.addEventListener("change", () => show(picker.value || null));
  log = h("div", { class: "tray-log", id: "assistant-log", tabindex: "0", role: "region", "aria-label": "Conversation" });
  message = h("textarea", { id: "assistant-message", rows: 3, maxlength: 8000, "aria-describedby": "assistant-message-help" });
  message.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  sendButton = h("button", { type: "submit", class: "primary" }, "Send");
  stopButton = button("Stop", () => running && running.abort(), { hidden: true });
  statusLine = h("p", { class: "muted tray-status", id: "assistant-status" });
  const form = h(
    "form",
    { class: "tray-form", "aria-label": "Ask the assistant" },
    h("label", { for: message.id }, "Message"),
    message,
    h("p", { class: "help", id: "assistant-message-help" }, "Ctrl+Enter sends. The assistant proposes changes; nothing changes until you apply them."),
    h("div", { class: "actions" }, sendButton, stopButton),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    send();
  });
  panel = h(
    "aside",
    { id: "assistant-tray", class: "tray", "aria-labelledby": "assistant-h", hidden: true },
    h(
      "div",
      { class: "tray-head" },
      h("h2", { id: "assistant-h" }, "Assistant"),
      button("Close", close, { class: "small", "aria-label": "Close the assistant" }),
    ),
    h(
      "div",
      { class: "tray-conversations" },
      h("label", { for: picker.id }, "Conversation"),
      h("div", { class: "actions" }, picker, button("New conversation", () => show(null), { class: "small" }), button("Delete", remove, { class: "small", id: "assistant-delete" })),
    ),
    statusLine,
    log,
    form,
  );
  panel.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !event.defaultPrevented) {
      event.preventDefault();
      close();
    }
  });
  toggle.addEventListener("click", () => (panel.hidden ? open() : close()));
  document.body.append(panel);
  const kept = sessionStorage.getItem(KEEP);
  if (kept) {
    sessionStorage.removeItem(KEEP);
    try {
      conversation = JSON.parse(kept).conversation || null;
    } catch {
      conversation = null;
    }
    open();
  }
}

async function open() {
  panel.hidden = false;
  toggle.setAttribute("aria-expanded", "true");
  document.body.classList.add("tray-open");
  message.focus();
  if (!loaded) {
    loaded = true;
    await Promise.all([readiness(), conversations()]);
  }
}

function close() {
  panel.hidden = true;
  toggle.setAttribute("aria-expanded", "false");
  document.body.classList.remove("tray-open");
  toggle.focus();
}

// Says up front when the assistant cannot answer (no provider, no budget).
async function readiness() {
  const { ok, data } = await api("GET", "/assistant");
  if (!ok) return;
  if (!data.connected) {
    replace(statusLine, "No model provider is connected yet. ", can("settings.manage") ? h("a", { href: `${ADMIN}/assistant` }, "Connect one in the assistant settings.") : "Ask an admin to connect one.");
    return;
  }
  const usage = data.usage || {};
  const limit = usage.limit ? ` of ${usage.limit}` : "";
  replace(statusLine, `${data.model} · this month: ${(usage.tokensIn || 0) + (usage.tokensOut || 0)}${limit} tokens used`);
  if (!data.canSpend) replace(statusLine, "Your role cannot use the assistant.");
}

async function conversations(select) {
  const { ok, data } = await api("GET", "/assistant/conversations" + query({ limit: 50 }));
  const items = ok ? data.data : [];
  replace(
    picker,
    h("option", { value: "" }, "New conversation"),
    items.map((c) => h("option", { value: c.id, selected: c.id === (select || conversation) }, c.title || "(untitled)")),
  );
  if (select !== undefined) return;
  if (conversation) await show(conversation);
  else if (items.length) await show(items[0].id);
}

async function show(id) {
  if (running) running.abort();
  conversation = id;
  picker.value = id || "";
  document.getElementById("assistant-delete").hidden = !id;
  replace(log);
  if (!id) {
    log.append(h("p", { class: "muted" }, "Ask about your site, or ask for a change: it comes back as a proposal to review."));
    message.focus();
    return;
  }
  const [found, proposals] = await Promise.all([
    api("GET", `/assistant/conversations/${id}`),
    api("GET", "/assistant/proposals" + query({ conversation: id, limit: 100 })),
  ]);
  if (conversation !== id) return;
  if (!found.ok) {
    log.append(h("p", { class: "alert" }, messageOf(found.data)));
    return;
  }
  const items = [
    ...found.data.messages.filter((m) => (m.role === "user" || m.role === "assistant") && m.text).map((m) => ({ at: m.createdAt, el: bubble(m.role, m.text) })),
    ...(proposals.ok ? proposals.data.data : []).map((p) => ({ at: p.createdAt, el: card(p) })),
  ];
  items.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  log.append(...items.map((i) => i.el));
  log.scrollTop = log.scrollHeight;
}

async function remove() {
  if (!conversation || !window.confirm("Delete this conversation? Its proposals stay in the list of proposals.")) return;
  const { ok, data } = await api("DELETE", `/assistant/conversations/${conversation}`);
  if (!ok) return announce(messageOf(data));
  conversation = null;
  await conversations(null);
  await show(null);
  announce("Conversation deleted");
}

function bubble(role, text) {
  return h("div", { class: `bubble ${role}` }, h("span", { class: "visually-hidden" }, role === "user" ? "You: " : "Assistant: "), h("span", { class: "text" }, text));
}

// --- a turn ------------------------------------------------------------------------

async function send() {
  const text = message.value.trim();
  if (!text || running) return;
  if (!conversation) {
    const made = await api("POST", "/assistant/conversations", {});
    if (!made.ok) return failure(messageOf(made.data));
    conversation = made.data.id;
    document.getElementById("assistant-delete").hidden = false;
    replace(log);
  }
  const id = conversation;
  log.append(bubble("user", text));
  message.value = "";
  // Each round of the model's text is its own bubble, after the tools and
  // proposals of the round before, in the order they happened.
  let answer = null;
  let said = "";
  const speak = () => {
    if (!answer) {
      answer = bubble("assistant", "");
      answer.setAttribute("aria-busy", "true");
      log.append(answer);
    }
    return answer.querySelector(".text");
  };
  const quiet = () => {
    if (answer) answer.removeAttribute("aria-busy");
    answer = null;
  };
  const working = h("p", { class: "tool muted" }, "Thinking…");
  log.append(working);
  running = new AbortController();
  sendButton.disabled = true;
  stopButton.hidden = false;
  let proposals = 0;
  let screen = null;
  announce("The assistant is answering…");
  const result = await postStream(
    `/assistant/conversations/${id}/messages`,
    { text },
    (name, data) => {
      if (conversation !== id) return;
      working.remove();
      if (name === "text") {
        speak().textContent += data.delta;
        said += data.delta;
      } else if (name === "tool") {
        quiet();
        log.append(h("p", { class: "tool muted" }, `Using ${data.name.replaceAll("_", " ")}`));
      } else if (name === "tool_error") {
        log.append(h("p", { class: "tool muted" }, `${data.name.replaceAll("_", " ")} refused the request; the assistant may retry.`));
      } else if (name === "proposal") {
        proposals += 1;
        log.append(card(data));
      } else if (name === "screen") {
        screen = data.path;
        log.append(h("p", { class: "tool muted" }, "Opening a screen when the answer is done"));
      }
      else if (name === "error") log.append(h("p", { class: "alert" }, messageOf(data)));
      log.scrollTop = log.scrollHeight;
    },
    running.signal,
  );
  working.remove();
  quiet();
  running = null;
  sendButton.disabled = false;
  stopButton.hidden = true;
  if (!result.ok) {
    log.append(h("p", { class: "alert" }, messageOf(result.data)));
    announce(messageOf(result.data));
  } else {
    // One announcement when the answer is whole, not one per streamed piece.
    const review = proposals ? ` ${proposals} proposal${proposals > 1 ? "s" : ""} to review.` : "";
    announce(`The assistant answered: ${said.slice(0, 300)}${review}`);
  }
  if (screen && goTo(screen)) return;
  conversations(id);
  message.focus();
}

function failure(text) {
  log.append(h("p", { class: "alert" }, text));
  announce(text);
}

// open_screen: the only tool that acts. Unsaved edits are not lost silently.
function goTo(path) {
  if (typeof path !== "string" || !path.startsWith("/")) return false;
  const editor = openEditor();
  if (editor && editor.isDirty() && !window.confirm("The assistant wants to open another screen. Leave this one and lose your unsaved changes?")) return false;
  if (editor) editor.forget();
  // The tray opens again on the next screen, on this conversation.
  sessionStorage.setItem(KEEP, JSON.stringify({ conversation }));
  announce("Opening the screen the assistant chose");
  location.assign(path);
  return true;
}

// --- proposals ---------------------------------------------------------------------

function label(tool) {
  return tool.replace(/^propose_/, "").replaceAll("_", " ");
}

function shown(value) {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

function diffRow(row) {
  const before = shown(row.before);
  const after = shown(row.after);
  const pieces = row.before === null || row.before === undefined
    ? [{ added: true, value: after }]
    : row.after === null || row.after === undefined
      ? [{ removed: true, value: before }]
      : (typeof row.before === "string" && typeof row.after === "string" && !before.includes("\n") ? diffWords : diffLines)(before, after);
  return h(
    "div",
    { class: "diff-row" },
    h("dt", {}, row.field),
    h(
      "dd",
      { class: "diff inline" },
      pieces.map((p) =>
        p.added
          ? h("ins", {}, h("span", { class: "visually-hidden" }, " added: "), p.value)
          : p.removed
            ? h("del", {}, h("span", { class: "visually-hidden" }, " removed: "), p.value)
            : h("span", {}, p.value),
      ),
    ),
  );
}

function target(proposal) {
  const { kind, id } = proposal.target || {};
  if (kind === "entry" && id) return h("a", { href: `${ADMIN}/entries/${id}` }, `entry ${id}`);
  return id ? `${kind} ${id}` : `a new ${kind}`;
}

const STATUS = { pending: "waiting for you", applied: "applied", dismissed: "dismissed", refused: "refused", applying: "being applied" };

function card(proposal) {
  const headingId = uid("proposal");
  const status = h("p", { class: "proposal-status" });
  const problem = h("p", { class: "alert", role: "alert", hidden: true });
  const actions = h("div", { class: "actions" });
  const extras = {};
  if (proposal.tool === "propose_person_role") extras.currentPassword = h("input", { type: "password", autocomplete: "current-password", id: uid("pw") });
  if (proposal.tool === "propose_social_app") extras.clientSecret = h("input", { type: "password", autocomplete: "off", id: uid("cs") });
  const extraFields = h(
    "div",
    {},
    extras.currentPassword ? h("div", { class: "field" }, h("label", { for: extras.currentPassword.id }, "Your password (asked for admin moves)"), extras.currentPassword) : null,
    extras.clientSecret ? h("div", { class: "field" }, h("label", { for: extras.clientSecret.id }, "Client secret (if the network needs one)"), extras.clientSecret) : null,
  );
  const el = h(
    "article",
    { class: "proposal", "aria-labelledby": headingId, dataset: { proposal: proposal.id } },
    h("h3", { id: headingId }, `Proposal: ${label(proposal.tool)}`),
    h("p", { class: "muted" }, "For ", target(proposal)),
    h("dl", { class: "diff-list" }, (proposal.diff || []).map(diffRow)),
    proposal.recoverable === false ? h("p", { class: "help" }, "This cannot be undone once applied.") : null,
    problem,
    status,
    extraFields,
    actions,
  );
  const render = (p, reason) => {
    el.className = `proposal ${p.status}`;
    status.textContent = `Status: ${STATUS[p.status] || p.status}`;
    if (p.status === "refused") {
      el.setAttribute("aria-disabled", "true");
      status.textContent = `Refused: ${reason || p.refusal || "it can no longer be applied"}`;
    }
    extraFields.hidden = p.status !== "pending";
    replace(
      actions,
      p.status === "pending"
        ? [
            button("Apply", () => apply(p, el, { render, problem, extras }), { class: "primary", "aria-describedby": headingId }),
            button("Dismiss", () => dismiss(p, { render, problem }), { "aria-describedby": headingId }),
          ]
        : null,
    );
  };
  render(proposal);
  return el;
}

async function apply(proposal, el, { render, problem, extras }) {
  const editor = openEditor();
  const touches = editor && editor.kind === "entry" && proposal.target && proposal.target.kind === "entry" && proposal.target.id === editor.id;
  if (touches && editor.isDirty()) {
    // The spec: unsaved manual edits must be saved or discarded first.
    const choice = await choose(
      "Unsaved changes in this entry",
      "Save or discard your changes before the proposal is applied. Saving changes the entry, so the assistant's proposal will then be out of date and refused: ask again afterwards.",
      [
        ["discard", "Discard my changes and apply"],
        ["save", "Save my changes"],
      ],
    );
    if (!choice) return;
    if (choice === "save") {
      if (!(await editor.save())) return;
    } else {
      await editor.reload();
    }
  }
  const body = {};
  for (const [key, input] of Object.entries(extras)) if (input.value) body[key] = input.value;
  problem.hidden = true;
  const buttons = el.querySelectorAll(".actions button");
  buttons.forEach((b) => (b.disabled = true));
  const { ok, data, status } = await api("POST", `/assistant/proposals/${proposal.id}/apply`, body);
  if (!ok) {
    buttons.forEach((b) => (b.disabled = false));
    if (FINAL.has(data.code) || status === 403) {
      render({ ...proposal, status: "refused" }, messageOf(data));
      announce(`The proposal was refused: ${messageOf(data)}`);
    } else {
      problem.textContent = messageOf(data);
      problem.hidden = false;
    }
    return;
  }
  render(data.proposal);
  if (data.secret) showSecret(el, data.secret);
  announce(`Applied: ${label(proposal.tool)}`);
  if (touches) await editor.reload("The assistant's proposal was applied: this is the entry now.");
}

function showSecret(el, secret) {
  const value = secret.key || secret.secret || Object.values(secret)[0];
  const id = uid("secret");
  el.append(
    h(
      "div",
      { class: "notice" },
      h("p", { id }, secret.key ? "The new key, shown this once: copy it now." : "The signing secret, shown this once: copy it now."),
      h("code", { class: "secret", "aria-labelledby": id, tabindex: "0" }, value),
      h("div", { class: "actions" }, copyButton(() => value)),
    ),
  );
}

async function dismiss(proposal, { render, problem }) {
  const { ok, data } = await api("POST", `/assistant/proposals/${proposal.id}/dismiss`);
  if (!ok) {
    problem.textContent = messageOf(data);
    problem.hidden = false;
    if (FINAL.has(data.code)) render({ ...proposal, status: "refused" }, messageOf(data));
    return;
  }
  render(data);
  announce("Proposal dismissed");
}

setup();
