import { api, say } from "./common.js";
import { badge, cell, showRows, when } from "./sending.js";

const table = document.getElementById("emails");
const listError = document.getElementById("list-error");
const newer = document.getElementById("newer");
const older = document.getElementById("older");
const LIMIT = 25;

// Cursor pages as the API has them: `after` the last id is older, `before` the first is newer.
async function load(cursor) {
  listError.textContent = "";
  const query = new URLSearchParams({ limit: String(LIMIT) });
  if (cursor) query.set(cursor.name, cursor.id);
  const { ok, data } = await api("GET", `/api/emails?${query}`);
  if (!ok) {
    say(listError, data);
    return;
  }
  const rows = data.data.map((item) => {
    const row = document.createElement("tr");
    const link = document.createElement("a");
    link.href = `/emails/${item.id}`;
    link.textContent = item.subject || "(no subject)";
    cell(row, link, "th").scope = "row";
    cell(row, item.to.join(", "));
    cell(row, badge(item.last_event));
    cell(row, item.scheduled_at && item.last_event === "scheduled" ? `${when(item.created_at)} (for ${when(item.scheduled_at)})` : when(item.created_at));
    return row;
  });
  showRows(table, document.getElementById("list-empty"), rows);
  const first = data.data[0];
  const last = data.data[data.data.length - 1];
  // Going back, has_more says whether newer ones remain; going forward, older ones.
  const goingBack = cursor && cursor.name === "before";
  newer.hidden = !first || !(cursor && (goingBack ? data.has_more : true));
  older.hidden = !last || !(goingBack ? true : data.has_more);
  newer.onclick = () => load({ name: "before", id: first.id });
  older.onclick = () => load({ name: "after", id: last.id });
}

load(null);
