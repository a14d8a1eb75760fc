// Rows of webhook events (the list envelope of /api/webhooks/events and of one endpoint's).
import { api, say } from "./common.js";
import { el, showPager, when } from "./pager.js";

export const STATUS_WORDS = {
  pending: "Waiting",
  retrying: "Retrying",
  delivered: "Delivered",
  failed: "Failed",
};

function eventRow(event) {
  const item = el("li", undefined, "row");
  const title = el("h3");
  const link = el("a", event.type, "mono");
  link.href = `/webhooks/${event.webhook_id}/events/${event.id}`;
  const badge = el("span", STATUS_WORDS[event.status] || event.status, event.status === "delivered" ? "badge ok" : "badge");
  title.append(link, " ", badge);
  const facts = el("dl", undefined, "facts");
  facts.append(el("dt", "Happened"), el("dd", when(event.created_at)));
  facts.append(el("dt", "Attempts"), el("dd", `${event.attempt_count}${event.last_status ? ` · last answer ${event.last_status}` : ""}`));
  if (event.next_attempt_at) facts.append(el("dt", "Next try"), el("dd", when(event.next_attempt_at)));
  item.append(title, facts);
  return item;
}

// Loads a page of events into the list, its pager and its error line (ids prefixed "events-").
export async function showEvents(path, page = 1) {
  const list = document.getElementById("events-list");
  const { ok, data } = await api("GET", `${path}?page=${page}&per_page=10`);
  if (!ok) {
    say(document.getElementById("events-error"), data);
    return;
  }
  list.replaceChildren(...data.data.map(eventRow));
  document.getElementById("events-empty").hidden = data.total > 0;
  showPager(document.getElementById("events-pager"), data, (next) =>
    showEvents(path, next).then(() => list.querySelector("a")?.focus()),
  );
}
