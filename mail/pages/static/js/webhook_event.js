// One event as sent to one endpoint: its payload, every attempt, and replay.
import { api, onSubmit, say } from "./common.js";
import { el, when } from "./pager.js";
import { STATUS_WORDS } from "./webhook_lists.js";

const root = document.getElementById("event");
const { webhookId, eventId } = root.dataset;
const path = `/api/webhooks/${webhookId}/events/${eventId}`;

function show(event) {
  document.getElementById("event-heading").textContent = event.type;
  const facts = document.getElementById("event-facts");
  facts.replaceChildren(
    el("dt", "Status"), el("dd", STATUS_WORDS[event.status] || event.status),
    el("dt", "Happened"), el("dd", when(event.created_at)),
    el("dt", "Message id"), el("dd", event.message_id, "mono"),
    el("dt", "Attempts"), el("dd", String(event.attempt_count)),
  );
  if (event.next_attempt_at) facts.append(el("dt", "Next try"), el("dd", when(event.next_attempt_at)));
  document.getElementById("payload").textContent = JSON.stringify(event.payload, null, 2);
  document.getElementById("attempts").replaceChildren(
    ...event.attempts.map((a) => {
      const tr = el("tr");
      tr.append(
        el("td", String(a.attempt)),
        el("td", when(a.at)),
        el("td", a.trigger === "replay" ? "Sent again" : "Scheduled"),
        el("td", a.status ? String(a.status) : a.error, a.ok ? "check-ok" : "check-bad"),
        el("td", `${a.duration_ms} ms`),
        el("td", a.response, "mono excerpt"),
      );
      return tr;
    }),
  );
}

const first = await api("GET", path);
if (!first.ok) say(document.getElementById("event-error"), first.data);
else show(first.data);

const replay = document.getElementById("replay-form");
onSubmit(replay, async () => {
  const { ok, data } = await api("POST", `${path}/replay`, {});
  if (!ok) {
    say(replay.querySelector(".error"), data);
    return;
  }
  show(data);
  const last = data.attempts[data.attempts.length - 1];
  replay.querySelector(".status").textContent = last.ok
    ? `Sent again: the receiver answered ${last.status}.`
    : `Sent again, not delivered: ${last.status || last.error}.`;
});
