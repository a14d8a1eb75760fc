import { api, onSubmit, showError, say } from "./common.js";
import { badge, cell, labelCells, when } from "./sending.js";

const heading = document.getElementById("subject");
const emailId = heading.dataset.emailId;
const form = document.getElementById("reschedule");

function fact(list, term, value) {
  const dt = document.createElement("dt");
  dt.textContent = term;
  const dd = document.createElement("dd");
  if (value instanceof Node) dd.append(value);
  else dd.textContent = value;
  list.append(dt, dd);
}

function localInput(iso) {
  // datetime-local wants the local wall time, without a zone.
  const date = new Date(iso);
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

async function load() {
  const { ok, data } = await api("GET", `/api/emails/${emailId}`);
  if (!ok) {
    say(document.getElementById("load-error"), data);
    return;
  }
  heading.textContent = data.subject || "(no subject)";
  document.title = `${heading.textContent} · Mail`;
  const facts = document.getElementById("facts");
  facts.replaceChildren();
  fact(facts, "Status", badge(data.last_event));
  fact(facts, "From", data.from);
  fact(facts, "To", data.to.join(", "));
  if (data.cc) fact(facts, "Cc", data.cc.join(", "));
  if (data.bcc) fact(facts, "Bcc", data.bcc.join(", "));
  if (data.reply_to) fact(facts, "Reply-To", data.reply_to.join(", "));
  fact(facts, "Created", when(data.created_at));
  if (data.scheduled_at) fact(facts, "Scheduled for", when(data.scheduled_at));
  if (data.tags.length) fact(facts, "Tags", data.tags.map((t) => `${t.name}: ${t.value}`).join(", "));
  if (data.attachments.length) fact(facts, "Attachments", data.attachments.map((a) => a.filename).join(", "));
  fact(facts, "Message-ID", data.message_id);
  document.getElementById("facts-card").hidden = false;

  form.hidden = data.last_event !== "scheduled";
  if (!form.hidden && data.scheduled_at) form.elements.namedItem("when").value = localInput(data.scheduled_at);

  const rows = data.recipients.map((r) => {
    const row = document.createElement("tr");
    cell(row, r.email, "th").scope = "row";
    cell(row, badge(r.status));
    cell(row, String(r.attempts));
    cell(row, when(r.last_attempt_at));
    cell(row, r.last_reply || "—").className = "reply";
    return row;
  });
  document.querySelector("#recipients tbody").replaceChildren(...rows);
  labelCells(document.getElementById("recipients"));
  document.getElementById("rcpt-card").hidden = rows.length === 0;

  const events = data.events.map((e) => {
    const item = document.createElement("li");
    const time = document.createElement("time");
    time.dateTime = e.created_at;
    time.textContent = when(e.created_at);
    const name = document.createElement("span");
    name.className = "mono";
    name.textContent = e.type;
    item.append(name, " · ", time);
    return item;
  });
  document.getElementById("events").replaceChildren(...events);
  document.getElementById("events-card").hidden = events.length === 0;

  document.getElementById("text-body").textContent = data.text ?? "(no text version)";
  const htmlDetails = document.getElementById("html-details");
  htmlDetails.hidden = !data.html;
  document.getElementById("html-body").textContent = data.html ?? "";
  document.getElementById("body-card").hidden = false;
}

onSubmit(form, async () => {
  const value = form.elements.namedItem("when").value;
  const date = new Date(value);
  if (!value || Number.isNaN(date.getTime())) return showError(form, { message: "Choose a date and time." }, "when");
  const { ok, data } = await api("PATCH", `/api/emails/${emailId}`, { scheduled_at: date.toISOString() });
  if (!ok) return showError(form, data, "when");
  await load();
  form.querySelector(".status").textContent = "Rescheduled.";
});

document.getElementById("cancel").addEventListener("click", async () => {
  if (!window.confirm("Cancel this email? It will not be sent.")) return;
  const { ok, data } = await api("POST", `/api/emails/${emailId}/cancel`, {});
  if (!ok) return showError(form, data);
  await load();
});

load();
