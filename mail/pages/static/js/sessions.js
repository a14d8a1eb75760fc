// Sessions: where the account is signed in; revoke one, or every other one.
import { api, onSubmit, say } from "./common.js";
import { el, showPager, when } from "./pager.js";

const list = document.getElementById("sessions-list");
const pager = document.getElementById("sessions-pager");
const error = document.getElementById("sessions-error");
const status = document.getElementById("sessions-status");
const others = document.getElementById("revoke-others");
let page = 1;

// "Firefox on Linux" from a User-Agent; the full string stays in the title.
export function device(agent) {
  if (!agent) return "Unknown device";
  const browser = [["Edg/", "Edge"], ["Firefox/", "Firefox"], ["Chrome/", "Chrome"], ["Safari/", "Safari"]]
    .find(([mark]) => agent.includes(mark));
  const system = [["Android", "Android"], ["iPhone", "iPhone"], ["iPad", "iPad"], ["Windows", "Windows"], ["Mac OS X", "macOS"], ["Linux", "Linux"]]
    .find(([mark]) => agent.includes(mark));
  if (!browser) return agent.split(" ")[0].slice(0, 60);
  return system ? `${browser[1]} on ${system[1]}` : browser[1];
}

function row(session) {
  const item = el("li", undefined, session.current ? "row current" : "row");
  const titleId = `session-${session.id}`;
  const title = el("h3", device(session.user_agent));
  title.id = titleId;
  title.title = session.user_agent;
  if (session.current) title.append(" ", el("span", "This session", "badge"));
  const facts = el("dl", undefined, "facts");
  for (const [term, value] of [
    ["IP address", session.ip || "unknown"],
    ["Signed in", when(session.created_at)],
    ["Last active", when(session.last_seen_at)],
    ["Expires", when(session.expires_at)],
  ]) {
    facts.append(el("dt", term), el("dd", value));
  }
  item.append(title, facts);
  if (session.current) {
    // This one ends by signing out, which also clears the cookie.
    const out = el("a", "Sign out");
    out.href = "/signout";
    item.append(out);
  } else {
    const revoke = el("button", "Revoke", "secondary");
    revoke.type = "button";
    revoke.setAttribute("aria-describedby", titleId);
    revoke.addEventListener("click", () => revokeOne(session, revoke));
    item.append(revoke);
  }
  return item;
}

async function load(to) {
  const { ok, data } = await api("GET", `/api/account/sessions?page=${to}&per_page=25`);
  document.getElementById("sessions-loading").hidden = true;
  if (!ok) {
    say(error, data);
    return;
  }
  // A page emptied by revoking goes back one.
  if (data.data.length === 0 && to > 1) return load(to - 1);
  page = data.page;
  list.replaceChildren(...data.data.map(row));
  showPager(pager, data, load);
  others.hidden = data.total <= 1;
}

function tell(message) {
  status.textContent = message;
  status.tabIndex = -1;
  status.focus();
}

async function revokeOne(session, button) {
  button.disabled = true;
  error.textContent = "";
  const { ok, data } = await api("DELETE", `/api/account/sessions/${session.id}`);
  if (!ok && data.name !== "not_found") {
    button.disabled = false;
    say(error, data);
    return;
  }
  await load(page);
  tell(`Signed out ${device(session.user_agent)} (signed in ${when(session.created_at)}).`);
}

onSubmit(others, async () => {
  const { ok, data } = await api("POST", "/api/account/sessions/revoke-others", {});
  if (!ok) {
    say(others.querySelector(".error"), data);
    return;
  }
  await load(1);
  tell(data.revoked === 1 ? "Signed out 1 other session." : `Signed out ${data.revoked} other sessions.`);
});

await load(1);
