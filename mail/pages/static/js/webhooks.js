// The webhooks list, and the latest events across every endpoint.
import { api, say } from "./common.js";
import { el, showPager } from "./pager.js";
import { showEvents } from "./webhook_lists.js";

const list = document.getElementById("webhooks-list");

function row(hook) {
  const item = el("li", undefined, "row");
  const title = el("h3");
  const link = el("a", hook.endpoint, "mono");
  link.href = `/webhooks/${hook.id}`;
  const state = hook.enabled ? "Enabled" : hook.disabled_reason === "failing" ? "Off: kept failing" : "Disabled";
  title.append(link, " ", el("span", state, hook.enabled ? "badge ok" : "badge"));
  const facts = el("dl", undefined, "facts");
  if (hook.description) facts.append(el("dt", "Description"), el("dd", hook.description));
  facts.append(el("dt", "Events"), el("dd", `${hook.events.length} types`));
  facts.append(el("dt", "Secret starts"), el("dd", hook.secret_hint, "mono"));
  if (hook.consecutive_failures) facts.append(el("dt", "Failures in a row"), el("dd", String(hook.consecutive_failures)));
  item.append(title, facts);
  return item;
}

async function load(page) {
  const { ok, data } = await api("GET", `/api/webhooks?page=${page}&per_page=25`);
  document.getElementById("webhooks-loading").hidden = true;
  if (!ok) {
    say(document.getElementById("webhooks-error"), data);
    return;
  }
  list.replaceChildren(...data.data.map(row));
  document.getElementById("webhooks-empty").hidden = data.total > 0;
  showPager(document.getElementById("webhooks-pager"), data, (next) => load(next).then(() => list.querySelector("a")?.focus()));
}

await Promise.all([load(1), showEvents("/api/webhooks/events")]);
