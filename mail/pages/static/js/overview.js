// The Overview's data (GET /api/overview, one request): counts, storage, a 30-day
// chart drawn as SVG bars, rates, DNS health, recent activity, failing webhooks,
// running transfers. Fills the partial templates/_overview.html.
import { api, say } from "./common.js";
import { el, when } from "./pager.js";

const SVG = "http://www.w3.org/2000/svg";

export function bytes(n) {
  if (n === null || n === undefined) return "unlimited";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = n;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value >= 10 || unit === 0 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`;
}

function percent(rate) {
  return rate === null ? "–" : `${(rate * 100).toFixed(rate < 0.01 ? 2 : 1)} %`;
}

function svg(tag, attributes) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  return node;
}

// Two bars per day (received, sent), scaled to the busiest; the numbers are in
// the table beside it for screen readers and for anyone who wants them exact.
function chart(daily) {
  const box = document.getElementById("mail-chart");
  const top = Math.max(1, ...daily.map((d) => Math.max(d.received, d.sent)));
  const width = daily.length * 10;
  const image = svg("svg", { viewBox: `0 0 ${width} 100`, preserveAspectRatio: "none", "aria-hidden": "true", focusable: "false" });
  daily.forEach((day, i) => {
    for (const [k, offset, cls] of [["received", 1, "bar-received"], ["sent", 5, "bar-sent"]]) {
      const h = (day[k] / top) * 96;
      image.append(svg("rect", { x: i * 10 + offset, y: 100 - h, width: 4, height: h, class: cls }));
    }
  });
  box.replaceChildren(image);
  const body = document.getElementById("mail-days");
  body.replaceChildren(
    ...[...daily].reverse().map((d) => {
      const tr = el("tr");
      tr.append(el("th", d.date), el("td", String(d.received)), el("td", String(d.sent)));
      tr.firstChild.scope = "row";
      return tr;
    }),
  );
}

function set(id, text) {
  document.getElementById(id).textContent = text;
}

function activityText(event) {
  const d = event.data || {};
  return d.subject || d.name || d.email || d.endpoint || "";
}

export async function loadOverview() {
  const { ok, data } = await api("GET", "/api/overview");
  if (!ok) {
    say(document.getElementById("overview-error"), data);
    return null;
  }
  set("count-domains", String(data.domains.total));
  set("count-addresses", String(data.addresses.total));
  const storage = data.storage;
  set("storage-used", `${bytes(storage.used_bytes)} of ${bytes(storage.quota_bytes || null)}`);
  const meter = document.getElementById("storage-meter");
  meter.max = storage.quota_bytes || 1;
  meter.value = storage.quota_bytes ? Math.min(storage.used_bytes, storage.quota_bytes) : 0;
  for (const span of ["last_24h", "last_30d"]) {
    set(`received-${span}`, String(data.mail[span].received));
    set(`sent-${span}`, String(data.mail[span].sent));
  }
  set("bounce-rate", percent(data.rates.bounce_rate));
  set("complaint-rate", percent(data.rates.complaint_rate));
  chart(data.mail.daily);

  const domains = document.getElementById("overview-domains");
  domains.replaceChildren(
    ...data.domains.data.map((d) => {
      const item = el("li", undefined, "row");
      const ok = d.dns_status === "verified";
      item.append(el("h3", d.name), el("span", ok ? "DNS verified" : `DNS ${d.dns_status}`, ok ? "badge ok" : "badge"));
      item.append(el("p", `${d.address_count} address${d.address_count === 1 ? "" : "es"}`, "help"));
      return item;
    }),
  );
  document.getElementById("overview-domains-empty").hidden = data.domains.total > 0;

  const recent = document.getElementById("overview-activity");
  recent.replaceChildren(
    ...data.recent_activity.map((e) => {
      const item = el("li", undefined, "row");
      item.append(el("h3", e.type, "mono"), el("span", when(e.created_at), "help"));
      const text = activityText(e);
      if (text) item.append(el("p", text, "help"));
      return item;
    }),
  );
  document.getElementById("overview-activity-empty").hidden = data.recent_activity.length > 0;

  const failing = document.getElementById("overview-failing");
  failing.replaceChildren(
    ...data.webhooks.failing.map((w) => {
      const item = el("li", undefined, "row");
      const link = el("a", w.endpoint, "mono");
      link.href = `/webhooks/${w.id}`;
      const title = el("h3");
      title.append(link);
      item.append(title, el("span", w.enabled ? `${w.consecutive_failures} failures in a row` : "Switched off", "badge"));
      return item;
    }),
  );
  document.getElementById("overview-failing-none").hidden = data.webhooks.failing.length > 0;

  const transfers = document.getElementById("overview-transfers");
  transfers.replaceChildren(...data.transfers.running.map((t) => {
    const p = t.progress;
    const li = el("li", "", "row");
    const link = el("a", `${t.source.host} → ${t.destination}`);
    link.href = `/transfers/${t.id}`;
    li.append(link, ` ${t.state}: ${p.messages_done} of ${p.messages_total} messages`);
    return li;
  }));
  document.getElementById("overview-transfers-none").hidden = data.transfers.running.length > 0;
  // The plan and its limited usage (GET /api/entitlement's numbers, mail/billing/).
  document.getElementById("overview-plan").textContent = data.plan.plan.name;
  const limited = Object.entries(data.plan.usage).filter(([, u]) => u.limit !== null);
  document.getElementById("overview-usage").replaceChildren(
    ...limited.map(([name, u]) => {
      const item = document.createElement("li");
      const label = document.createElement("label");
      label.htmlFor = `overview-usage-${name}`;
      label.textContent = name.replaceAll("_", " ");
      const text = document.createElement("span");
      text.className = "usage-text";
      text.textContent = `${u.used} of ${u.limit}`;
      const bar = document.createElement("progress");
      bar.id = `overview-usage-${name}`;
      bar.max = Math.max(u.limit, 1);
      bar.value = Math.min(u.used, bar.max);
      if (u.over) item.className = "over";
      item.append(label, text, bar);
      return item;
    }),
  );
  document.getElementById("overview-data").hidden = false;
  return data;
}
