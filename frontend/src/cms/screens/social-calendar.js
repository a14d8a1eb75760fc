// The social calendar: a week or a month of scheduled (and sent) posts in a
// grid. Arrow keys move between days (Home/End: the week's ends, Page Up/Down:
// the previous or next period), Enter goes into a day's posts, Escape back to
// the day; each post is a link to the post.
import "../lib/shell.js";
import { ADMIN, api, latest, messageOf, query } from "../lib/api.js";
import { announce, button, h, replace, screenRoot } from "../lib/dom.js";
import { excerpt, localDay, postHref, socialNav } from "../lib/social.js";
import { readQuery, writeQuery } from "../lib/table.js";

const DEFAULTS = { view: "week", date: localDay(new Date()) };
const state = readQuery(DEFAULTS);
if (!["week", "month"].includes(state.view)) state.view = "week";
const root = screenRoot();
const heading = h("h2", { id: "cal-heading", "aria-live": "polite" });
const status = h("p", { class: "status", role: "status" });
const grid = h("div", { class: "calendar-wrap" });
const weekBtn = button("Week", () => setView("week"), { "aria-pressed": "false" });
const monthBtn = button("Month", () => setView("month"), { "aria-pressed": "false" });
const prev = button("Previous", () => move(-1));
const next = button("Next", () => move(1));
const today = button("Today", () => go(new Date(), true));
replace(
  root,
  socialNav("/calendar"),
  h("div", { class: "toolbar cal-tools" }, h("div", { class: "actions", role: "group", "aria-label": "Period" }, prev, today, next), h("div", { class: "actions", role: "group", "aria-label": "Show" }, weekBtn, monthBtn)),
  heading,
  status,
  grid,
  h("p", { class: "muted" }, "Use the arrow keys to move between days, Enter to reach a day's posts and Escape to come back. ", h("a", { href: `${ADMIN}/social/posts/new` }, "Write a new post")),
);

const parse = (day) => {
  const [y, m, d] = day.split("-").map(Number);
  return new Date(y, m - 1, d);
};
const addDays = (date, n) => new Date(date.getFullYear(), date.getMonth(), date.getDate() + n);
// Weeks start on Monday (ISO 8601).
const monday = (date) => addDays(date, -((date.getDay() + 6) % 7));
const longDay = (date) => date.toLocaleDateString(undefined, { weekday: "long", day: "numeric", month: "long", year: "numeric" });

function range() {
  const anchor = parse(state.date);
  if (state.view === "week") return { start: monday(anchor), days: 7, anchor };
  const first = new Date(anchor.getFullYear(), anchor.getMonth(), 1);
  const last = new Date(anchor.getFullYear(), anchor.getMonth() + 1, 0);
  const start = monday(first);
  const end = addDays(monday(last), 7);
  return { start, days: Math.round((end - start) / 86400000), anchor };
}

function setView(view) {
  state.view = view;
  load(true);
}

function move(step) {
  const anchor = parse(state.date);
  const to = state.view === "week" ? addDays(anchor, 7 * step) : new Date(anchor.getFullYear(), anchor.getMonth() + step, Math.min(anchor.getDate(), 28));
  go(to, false);
}

function go(date, focus) {
  state.date = localDay(date);
  load(focus);
}

const fresh = latest();
async function load(focus) {
  const mine = fresh();
  writeQuery(state, DEFAULTS);
  weekBtn.setAttribute("aria-pressed", String(state.view === "week"));
  monthBtn.setAttribute("aria-pressed", String(state.view === "month"));
  prev.textContent = state.view === "week" ? "Previous week" : "Previous month";
  next.textContent = state.view === "week" ? "Next week" : "Next month";
  const { start, days, anchor } = range();
  const { ok, data } = await api("GET", "/social/calendar" + query({ from: start.toISOString(), days }));
  if (!mine()) return;
  if (!ok) {
    status.textContent = messageOf(data);
    return;
  }
  const byDay = new Map();
  for (const post of data.data) {
    const moment = post.scheduledAt || post.sentAt;
    if (!moment) continue;
    const key = localDay(new Date(moment));
    if (!byDay.has(key)) byDay.set(key, []);
    byDay.get(key).push({ post, moment: new Date(moment) });
  }
  for (const items of byDay.values()) items.sort((a, b) => a.moment - b.moment);
  heading.textContent =
    state.view === "week"
      ? `Week of ${start.toLocaleDateString(undefined, { day: "numeric", month: "long", year: "numeric" })}`
      : anchor.toLocaleDateString(undefined, { month: "long", year: "numeric" });
  draw(start, days, byDay, anchor);
  status.textContent = data.data.length ? `${data.data.length} ${data.data.length === 1 ? "post" : "posts"} in this ${state.view}` : `Nothing scheduled this ${state.view}.`;
  if (focus) cellOf(state.date)?.focus();
}

let cells = [];
function cellOf(day) {
  return cells.find((c) => c.dataset.day === day);
}

function draw(start, days, byDay, anchor) {
  const names = [...Array(7)].map((_, i) => addDays(monday(new Date()), i).toLocaleDateString(undefined, { weekday: "short" }));
  const rows = [];
  cells = [];
  const todayKey = localDay(new Date());
  for (let w = 0; w < days / 7; w += 1) {
    const row = h("tr", {});
    for (let d = 0; d < 7; d += 1) {
      const date = addDays(start, w * 7 + d);
      const key = localDay(date);
      const items = byDay.get(key) || [];
      const cell = h(
        "td",
        {
          role: "gridcell",
          tabindex: key === state.date ? 0 : -1,
          class: [date.getMonth() !== anchor.getMonth() && state.view === "month" ? "outside" : "", key === todayKey ? "today" : "", items.length ? "busy" : ""].join(" ").trim() || null,
          "aria-current": key === todayKey ? "date" : null,
          dataset: { day: key },
        },
        h("span", { class: "day-num", "aria-hidden": "true" }, String(date.getDate())),
        h("span", { class: "day-long" }, `${longDay(date)}${items.length ? `, ${items.length} ${items.length === 1 ? "post" : "posts"}` : ""}`),
        items.length
          ? h(
              "ul",
              { class: "cal-posts" },
              items.map(({ post, moment }) =>
                h(
                  "li",
                  {},
                  h(
                    "a",
                    { href: postHref(post.id), class: `cal-post social-${post.status}`, tabindex: -1 },
                    h("span", { class: "cal-time" }, moment.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" })),
                    ` ${excerpt(post.text, 40)} `,
                    h("span", { class: "cal-status" }, `(${post.status}; ${post.targets.map((t) => t.network).join(", ") || "no account"})`),
                  ),
                ),
              ),
            )
          : null,
      );
      cell.addEventListener("keydown", (event) => keys(event, cell));
      cell.addEventListener("focus", () => {
        state.date = key;
        for (const c of cells) c.tabIndex = c === cell ? 0 : -1;
      });
      cells.push(cell);
      row.append(cell);
    }
    rows.push(row);
  }
  replace(
    grid,
    h(
      "table",
      { role: "grid", class: `calendar ${state.view}`, "aria-labelledby": "cal-heading" },
      h("thead", {}, h("tr", {}, names.map((n) => h("th", { scope: "col" }, n)))),
      h("tbody", {}, rows),
    ),
  );
}

function keys(event, cell) {
  const links = [...cell.querySelectorAll("a")];
  if (event.target !== cell) {
    // Inside a day: arrows move between its posts, Escape goes back to the day.
    const i = links.indexOf(event.target);
    if (event.key === "Escape") cell.focus();
    else if (event.key === "ArrowDown" && links[i + 1]) links[i + 1].focus();
    else if (event.key === "ArrowUp" && links[i - 1]) links[i - 1].focus();
    else return;
    event.preventDefault();
    event.stopPropagation();
    return;
  }
  const date = parse(cell.dataset.day);
  const index = (date.getDay() + 6) % 7;
  const step = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -7, ArrowDown: 7, Home: -index, End: 6 - index }[event.key];
  if (event.key === "Enter" || event.key === " ") {
    event.preventDefault();
    if (links.length) links[0].focus();
    else announce("No post on this day");
    return;
  }
  if (event.key === "PageUp" || event.key === "PageDown") {
    event.preventDefault();
    const dir = event.key === "PageUp" ? -1 : 1;
    const to = state.view === "week" ? addDays(date, 7 * dir) : new Date(date.getFullYear(), date.getMonth() + dir, Math.min(date.getDate(), 28));
    return go(to, true);
  }
  if (step === undefined) return;
  event.preventDefault();
  const to = addDays(date, step);
  const target = cellOf(localDay(to));
  if (target) {
    cell.tabIndex = -1;
    target.tabIndex = 0;
    target.focus();
  } else {
    go(to, true);
  }
}

await load(false);
