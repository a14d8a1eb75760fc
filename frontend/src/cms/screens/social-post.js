// A social post: the composer (text, link, media, accounts) with a preview per
// network counting that network's limits while typing, then save, schedule,
// publish now (which doubles as retry), cancel the schedule, delete; and each
// target's outcome with the network's own words and the link to what was sent.
import "../lib/shell.js";
import { api, can, messageOf } from "../lib/api.js";
import { alertBox, announce, button, h, labelled, replace, screenRoot, setFieldError, setTitle, showAlert, uid, when } from "../lib/dom.js";
import { announceUpload, chooseMedia, fileButton, upload } from "../lib/media.js";
import { Problems } from "../lib/problems.js";
import { UNITS, excerpt, localInput, postHref, problemsFor, sentText, socialNav, statusBadge } from "../lib/social.js";
import { cells, table } from "../lib/table.js";

const root = screenRoot();
const mayPublish = can("social.publish");
let post = null; // the saved post, as the API last answered
let dirty = false;
let chosen = []; // media records {id, filename, type, size, url, alt}

// --- the form -------------------------------------------------------------------------

const box = alertBox();
const text = h("textarea", { id: "social-text", rows: 6 });
const link = h("input", { type: "url", id: "social-link", placeholder: "https://" });
const textWrap = labelled("Text", text, { help: "Each network below counts it its own way." });
const linkWrap = labelled("Link (optional)", link, { help: "Added to the text where a network takes links in the text; a field of its own on Facebook and Pinterest." });

const mediaLabel = uid("media-label");
const mediaList = h("ul", { class: "chips", id: "social-media", tabindex: -1, "aria-labelledby": mediaLabel });
const mediaWrap = h(
  "div",
  { class: "field", role: "group", "aria-labelledby": mediaLabel },
  h("span", { class: "label", id: mediaLabel }, "Media"),
  h("p", { class: "help" }, "Images or one video, as the networks take them."),
  mediaList,
  h(
    "div",
    { class: "actions" },
    button("Choose from the library", async () => {
      const picked = await chooseMedia({ multiple: true, title: "Choose images or a video", type: "" });
      for (const m of picked) if (!chosen.some((c) => c.id === m.id)) chosen.push(m);
      changed();
    }),
    fileButton("Upload a file", async (files) => {
      for (const file of files) {
        const result = await upload(file);
        announceUpload(result);
        if (result.ok) chosen.push(result.data);
      }
      changed();
    }, { multiple: true, accept: "image/*,video/*" }),
  ),
  h("p", { class: "field-error", id: "social-media-error", hidden: true }),
);

const accountsBox = h("fieldset", { class: "field", id: "social-accounts", tabindex: -1 }, h("legend", {}, "Post to"));
const accountsWrap = h("div", {}, accountsBox, h("p", { class: "field-error", id: "social-accounts-error", hidden: true }));
const accountBoxes = []; // {box, account, network}

const problems = new Problems(box, (key) => {
  const head = key.split(".")[0];
  if (head === "text") return { wrap: textWrap, input: text, label: "Text" };
  if (head === "link") return { wrap: linkWrap, input: link, label: "Link" };
  if (head === "media") {
    const i = Number(key.split(".")[1]);
    const name = Number.isInteger(i) && chosen[i] ? `Media ${i + 1} (${chosen[i].filename})` : "Media";
    return { wrap: mediaWrap, input: mediaList, label: name };
  }
  if (head === "accounts") return { wrap: accountsWrap, input: accountsBox, label: "Post to" };
  if (head === "at") return { wrap: atWrap, input: at, label: "Send at" };
  return null;
});

const form = h("form", { class: "card", novalidate: true, "aria-label": "The post" }, box, textWrap, linkWrap, mediaWrap, accountsWrap);
form.addEventListener("submit", (event) => {
  event.preventDefault();
  save();
});

// --- previews ---------------------------------------------------------------------------

const previewCards = h("div");
// The verdict's live region stays put: only the cards are redrawn.
const previewStatus = h("p", { class: "visually-hidden", role: "status" });
const previews = h("div", { class: "previews" }, h("h2", {}, "Previews"), previewCards, previewStatus);
let lastSummary = "";
let networks = [];

function selectedAccounts() {
  return accountBoxes.filter((a) => a.box.checked);
}

function drawPreviews() {
  const selected = selectedAccounts();
  const byNetwork = new Map();
  for (const a of selected) {
    if (!byNetwork.has(a.network.network)) byNetwork.set(a.network.network, { network: a.network, handles: [] });
    byNetwork.get(a.network.network).handles.push(a.account.handle);
  }
  const media = chosen.map((m) => ({ type: m.type || "", size: m.size || 0 }));
  const over = [];
  const cards = [];
  for (const { network, handles } of byNetwork.values()) {
    const rules = network.rules;
    const body = text.value.trim();
    const { counted, problems: found } = problemsFor(network.network, rules, body, link.value.trim(), media);
    if (found.length) over.push(network.label);
    const headingId = `preview-${network.network}`;
    const shown = sentText(rules, body, link.value.trim());
    cards.push(
      h(
        "section",
        { class: `card preview${found.length ? " refused" : ""}`, "aria-labelledby": headingId, dataset: { network: network.network } },
        h("h3", { id: headingId }, `${network.label} preview`),
        h("p", { class: "muted" }, handles.map((x) => `@${x}`).join(", ")),
        h("p", { class: "preview-text" }, shown || h("span", { class: "muted" }, "(no text)")),
        chosen.length ? h("p", { class: "muted" }, `${chosen.length} ${chosen.length === 1 ? "file" : "files"} attached`) : null,
        link.value.trim() && rules.link === "field" ? h("p", { class: "muted" }, `The link goes in ${network.label}'s own link field.`) : null,
        link.value.trim() && rules.link === "dropped" ? h("p", { class: "muted" }, `${network.label} takes no links in posts: the link is left out.`) : null,
        h("p", { class: `count${counted > rules.maxText ? " over" : ""}` }, `${counted} of ${rules.maxText} ${UNITS[rules.counting]}`),
        h("p", { class: "muted" }, limitsLine(rules)),
        found.length
          ? h("ul", { class: "refusals", "aria-label": `${network.label} would refuse` }, found.map((p) => h("li", {}, p.message.replace(`${network.network}: `, ""))))
          : h("p", { class: "ok" }, `${network.label} would take it.`),
      ),
    );
  }
  replace(previewCards, cards.length ? h("div", { class: "preview-grid" }, cards) : h("p", { class: "muted" }, "Choose an account to see how each network shows the post."));
  // Read out only when the verdict changes, not on every key.
  const summary = over.length ? `${over.join(", ")} would refuse this post.` : cards.length ? "Every chosen network would take this post." : "";
  if (summary !== lastSummary) {
    lastSummary = summary;
    previewStatus.textContent = summary;
  }
}

function limitsLine(rules) {
  const parts = [];
  if (rules.maxImages) parts.push(`up to ${rules.maxImages} ${rules.maxImages === 1 ? "image" : "images"}`);
  else parts.push("no images");
  if (rules.maxVideos) parts.push("or one video");
  if (rules.mediaRequired) parts.push("media required");
  if (rules.maxTitle) parts.push(`the first line is the title (${rules.maxTitle} at most)`);
  return `Takes ${parts.join(", ")}.`;
}

function drawMedia() {
  replace(
    mediaList,
    chosen.map((m, i) =>
      h(
        "li",
        {},
        m.type && m.type.startsWith("image/") ? h("img", { src: m.url, alt: "", class: "chip-thumb" }) : null,
        h("span", {}, `${m.filename} (${m.type})`),
        button("Remove", () => {
          chosen.splice(i, 1);
          changed();
          announce(`${m.filename} removed`);
        }, { class: "small", "aria-label": `Remove ${m.filename}` }),
      ),
    ),
  );
  if (!chosen.length) mediaList.append(h("li", { class: "empty muted" }, "No media."));
}

function changed() {
  dirty = true;
  drawMedia();
  drawPreviews();
  drawActions();
}

for (const input of [text, link]) {
  input.addEventListener("input", () => {
    const first = !dirty;
    dirty = true;
    drawPreviews();
    // "unsaved changes" shows once, not redrawn on every key.
    if (first && post) drawActions();
  });
}

// --- actions and outcomes ------------------------------------------------------------------

const at = h("input", { type: "datetime-local", id: "social-at" });
const atWrap = labelled("Send at", at, { help: "Your time zone; a time in the past is refused." });
const actionStatus = h("p", { class: "status", role: "status" });
const actions = h("section", { class: "card", "aria-labelledby": "social-actions" });
const outcomes = h("section", { class: "card", "aria-labelledby": "social-outcomes", hidden: true });

function drawActions() {
  const status = post ? post.status : "draft";
  const sending = status === "publishing";
  const saveBtn = h("button", { type: "submit", class: "primary", form: form.id, disabled: sending }, post ? "Save the post" : "Save as draft");
  const parts = [h("h2", { id: "social-actions" }, "Publishing"), h("p", {}, "Status: ", statusBadge(status), post && post.scheduledAt ? ` for ${when(post.scheduledAt)}` : "", dirty && post ? h("span", { class: "muted" }, " · unsaved changes") : null), h("div", { class: "actions" }, saveBtn)];
  if (mayPublish && (status === "draft" || status === "scheduled")) {
    at.min = localInput(new Date());
    parts.push(atWrap, h("div", { class: "actions" }, button(status === "scheduled" ? "Reschedule" : "Schedule", schedule), button("Publish now", publish)));
  }
  if (mayPublish && status === "scheduled") parts.push(h("div", { class: "actions" }, button("Cancel the schedule", cancel)));
  if (!mayPublish) parts.push(h("p", { class: "muted" }, "Editors schedule and publish; you can write and save."));
  if (post) parts.push(h("div", { class: "actions" }, button("Delete the post", remove, { class: "danger" })));
  parts.push(actionStatus);
  replace(actions, ...parts);
}

function drawOutcomes() {
  const targets = post ? post.targets : [];
  outcomes.hidden = !post || !targets.length || targets.every((t) => t.status === "pending");
  if (outcomes.hidden) return replace(outcomes);
  const failed = targets.filter((t) => t.status === "failed" || t.status === "retrying");
  const label = (t) => `${labelOf(t.network)} @${t.handle}`;
  replace(
    outcomes,
    h("h2", { id: "social-outcomes" }, "Outcome per account"),
    table(
      "Outcome per account",
      ["Account", "Status", "The network said", "Sent post"],
      targets.map((t) =>
        cells(
          label(t),
          h("span", {}, statusBadge(t.status), t.status === "retrying" && t.nextAttemptAt ? ` next try ${when(t.nextAttemptAt)}` : ""),
          t.error ? h("span", { class: t.status === "failed" ? "network-error" : "" }, t.error, t.errorKind === "reconnect" ? " (the account needs reconnecting)" : "") : t.status === "posted" ? `posted ${when(t.postedAt)}` : "",
          t.url ? h("a", { href: t.url, rel: "noopener noreferrer", target: "_blank" }, `View on ${labelOf(t.network)}`, h("span", { class: "visually-hidden" }, ` (@${t.handle}, opens a new tab)`)) : "",
        ),
      ),
    ),
    failed.length && mayPublish && post.status !== "publishing"
      ? h("div", { class: "actions" }, button(`Retry ${failed.length === 1 ? "the failed account" : `the ${failed.length} failed accounts`}`, publish, { class: "primary" }), h("span", { class: "muted" }, "Accounts already posted are skipped."))
      : null,
  );
}

function labelOf(key) {
  const n = networks.find((x) => x.network === key);
  return n ? n.label : key;
}

function payload() {
  return {
    text: text.value,
    link: link.value.trim() || null,
    media: chosen.map((m) => m.id),
    accounts: selectedAccounts().map((a) => a.account.id),
  };
}

function show(saved) {
  post = saved;
  dirty = false;
  drawActions();
  drawOutcomes();
  if (post && post.status === "publishing") poll();
}

async function save() {
  problems.clear();
  const result = post ? await api("PUT", `/social/posts/${post.id}`, payload()) : await api("POST", "/social/posts", payload());
  if (!result.ok) {
    problems.show(result.data);
    announce(result.data.code === "SOCIAL_INVALID" ? "Nothing was saved: a network would refuse this post." : "Nothing was saved.");
    return false;
  }
  const fresh = !post;
  show(result.data);
  if (fresh) {
    history.replaceState(null, "", postHref(post.id));
    setTitle("Social post");
  }
  actionStatus.textContent = "Saved.";
  announce("The post was saved");
  return true;
}

async function ensureSaved() {
  if (post && !dirty) return true;
  return save();
}

async function schedule() {
  problems.clear();
  if (!at.value) return problems.show({ details: { fields: [{ key: "at", message: "choose a day and time" }] } });
  const moment = new Date(at.value);
  if (!(moment > new Date())) return problems.show({ details: { fields: [{ key: "at", message: "must be in the future" }] } });
  if (!(await ensureSaved())) return;
  const result = await api("POST", `/social/posts/${post.id}/schedule`, { at: moment.toISOString() });
  if (!result.ok) return problems.show(result.data);
  show(result.data);
  actionStatus.textContent = `Scheduled for ${when(post.scheduledAt)}.`;
  announce(actionStatus.textContent);
}

async function publish() {
  problems.clear();
  if (!(await ensureSaved())) return;
  const result = await api("POST", `/social/posts/${post.id}/publish`);
  if (!result.ok) return problems.show(result.data);
  actionStatus.textContent = "Sending…";
  show(result.data);
}

async function cancel() {
  const result = await api("POST", `/social/posts/${post.id}/cancel`);
  if (!result.ok) return problems.show(result.data);
  show(result.data);
  actionStatus.textContent = "The schedule was cancelled: the post is a draft again.";
  announce(actionStatus.textContent);
}

async function remove() {
  if (!window.confirm("Delete this post? What was already sent stays on the networks.")) return;
  const result = await api("DELETE", `/social/posts/${post.id}`);
  if (!result.ok) return problems.show(result.data);
  location.assign(`${document.body.dataset.admin}/social/posts`);
}

let polling = false;
async function poll() {
  if (polling) return;
  polling = true;
  try {
    for (let i = 0; i < 120 && post && post.status === "publishing"; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const { ok, data } = await api("GET", `/social/posts/${post.id}`);
      if (!ok) break;
      post = data;
      drawOutcomes();
      if (post.status !== "publishing") {
        drawActions();
        actionStatus.textContent = { published: "Published on every account.", partial: "Published on some accounts; see the outcome per account.", failed: "Not published; see what each network said." }[post.status] || "";
        announce(actionStatus.textContent);
      }
    }
  } finally {
    polling = false;
  }
}

// --- loading ----------------------------------------------------------------------------------

function drawAccounts() {
  const parts = [h("legend", {}, "Post to")];
  const connected = networks.filter((n) => n.accounts.length);
  if (!connected.length) {
    parts.push(h("p", { class: "muted" }, "No account is connected yet. ", can("social.manage") ? h("a", { href: `${document.body.dataset.admin}/social/settings` }, "Connect one") : "An admin connects them."));
  }
  for (const network of connected) {
    for (const account of network.accounts) {
      const id = `account-${account.id}`;
      const box = h("input", { type: "checkbox", id, value: account.id });
      box.addEventListener("change", () => {
        dirty = true;
        drawPreviews();
        drawActions();
      });
      accountBoxes.push({ box, account, network });
      parts.push(h("div", { class: "check" }, box, h("label", { for: id }, `${network.label} @${account.handle}`, account.needsAttention ? h("span", { class: "attention" }, " (needs attention)") : null)));
    }
  }
  replace(accountsBox, ...parts);
}

form.id = "social-form";
const layout = h("div", { class: "editor" }, h("div", {}, form, outcomes, previews), h("div", { class: "side" }, actions));
replace(root, socialNav("/posts"), layout);

const postId = document.body.dataset.post;
const [nets, saved] = await Promise.all([api("GET", "/social/networks"), postId ? api("GET", `/social/posts/${postId}`) : Promise.resolve(null)]);
if (!nets.ok || (saved && !saved.ok)) {
  showAlert(box, h("p", {}, messageOf((saved && !saved.ok ? saved : nets).data)));
} else {
  networks = nets.data.data;
  drawAccounts();
  if (saved) {
    const p = saved.data;
    text.value = p.text;
    link.value = p.link || "";
    const found = await Promise.all(p.media.map((id) => api("GET", `/media/${id}`)));
    chosen = found.map((r, i) => (r.ok ? r.data : { id: p.media[i], filename: p.media[i], type: "", size: 0 }));
    const mine = new Set(p.targets.map((t) => t.accountId));
    for (const a of accountBoxes) a.box.checked = mine.has(a.account.id);
    setTitle(`Social post: ${excerpt(p.text, 40)}`);
  } else {
    for (const a of accountBoxes) a.box.checked = !a.account.needsAttention;
  }
  drawMedia();
  drawPreviews();
  show(saved ? saved.data : null);
}
// Stops a stale error mark once the person fixes the time.
at.addEventListener("input", () => setFieldError(atWrap, at, ""));
