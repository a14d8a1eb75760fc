// The filter editor: the script is compiled as you type (POST
// /api/filters/validate, debounced), and a compiler error marks its line in
// the gutter, is tied to the textarea, and a button selects that line.
import { api, messageOf, onSubmit, showError } from "./common.js";

const DEBOUNCE_MS = 400;
const form = document.getElementById("filter");
const filterId = form.dataset.filterId;
const script = document.getElementById("script");
const gutter = document.getElementById("gutter");
const ok = document.getElementById("script-ok");
const bad = document.getElementById("script-bad");
const gotoLine = document.getElementById("goto-line");
let badLine = 0;
let timer = 0;
let asked = 0; // the newest validation sent; older answers are dropped

// The line numbers beside the script, with the failing line marked (not by colour alone).
function drawGutter() {
  const count = script.value.split("\n").length;
  const lines = [];
  for (let n = 1; n <= count; n++) {
    const mark = document.createElement("span");
    mark.textContent = n === badLine ? `▶ ${n}` : String(n);
    if (n === badLine) mark.className = "bad";
    lines.push(mark, "\n");
  }
  gutter.replaceChildren(...lines);
  gutter.scrollTop = script.scrollTop;
}

function showCheck(result) {
  if (result === null) {
    badLine = 0;
    ok.hidden = bad.hidden = true;
    script.removeAttribute("aria-invalid");
  } else if (result.valid) {
    badLine = 0;
    bad.hidden = true;
    ok.hidden = false;
    const uses = result.extensions.length ? ` Uses ${result.extensions.join(", ")}.` : "";
    ok.textContent = `The script compiles.${uses}`;
    script.removeAttribute("aria-invalid");
  } else {
    const message = result.message.replace(/^script does not compile: /, "");
    const line = Number((/line (\d+)/.exec(message) || [])[1] || 0);
    // An error past the end (an unclosed block) belongs to the last line.
    badLine = line ? Math.min(line, script.value.split("\n").length) : 0;
    ok.hidden = true;
    bad.hidden = false;
    document.getElementById("script-bad-text").textContent = message.charAt(0).toUpperCase() + message.slice(1);
    document.getElementById("goto-line-number").textContent = String(badLine);
    gotoLine.hidden = !badLine;
    script.setAttribute("aria-invalid", "true");
  }
  drawGutter();
}

async function validate() {
  const text = script.value;
  const mine = ++asked;
  if (!text.trim()) return showCheck(null);
  const { ok: good, data } = await api("POST", "/api/filters/validate", { script: text });
  if (mine !== asked) return; // typed again meanwhile
  if (good) showCheck({ valid: true, extensions: data.extensions });
  else if (data.name === "validation_error") showCheck({ valid: false, message: data.message });
  else showCheck({ valid: false, message: messageOf(data) });
}

// Selects the failing line in the textarea, so the keyboard lands on it.
gotoLine.addEventListener("click", () => {
  const lines = script.value.split("\n");
  const start = lines.slice(0, badLine - 1).reduce((sum, l) => sum + l.length + 1, 0);
  script.focus();
  script.setSelectionRange(start, start + lines[badLine - 1].length);
  const lineHeight = parseFloat(getComputedStyle(script).lineHeight) || 20;
  script.scrollTop = Math.max(0, (badLine - 3) * lineHeight);
});

script.addEventListener("input", () => {
  drawGutter();
  clearTimeout(timer);
  timer = setTimeout(validate, DEBOUNCE_MS);
});
script.addEventListener("scroll", () => (gutter.scrollTop = script.scrollTop));

function body() {
  const out = {
    address_id: form.elements.namedItem("address_id").value,
    name: form.elements.namedItem("name").value,
    script: script.value,
    enabled: form.elements.namedItem("enabled").checked,
  };
  const position = form.elements.namedItem("position").value;
  if (position !== "") out.position = Number(position);
  for (const key of ["address_id", "name", "script"]) if (!out[key]) delete out[key];
  return out;
}

onSubmit(form, async () => {
  clearTimeout(timer);
  const { ok: saved, data } = filterId
    ? await api("PATCH", `/api/filters/${filterId}`, body())
    : await api("POST", "/api/filters", body());
  if (!saved) {
    if (/^script /.test(data.message || "")) {
      showCheck({ valid: false, message: data.message });
      showError(form, data, "script");
    } else {
      showError(form, data);
    }
    return;
  }
  if (!filterId) {
    // Now it exists: its own address, so a reload edits it.
    window.location.assign(`/filters/${data.id}?saved=1`);
    return;
  }
  form.querySelector("#filter-status").textContent = `Saved ${data.name}.`;
});

document.getElementById("delete").addEventListener("click", async () => {
  const name = form.elements.namedItem("name").value;
  if (!window.confirm(`Delete the filter ${name}?`)) return;
  const { ok: gone, data } = await api("DELETE", `/api/filters/${filterId}`);
  if (!gone) return showError(form, data);
  window.location.assign("/filters");
});

async function start() {
  const query = new URLSearchParams(window.location.search);
  let chosen = query.get("address_id") || "";
  if (filterId) {
    const { ok: found, data } = await api("GET", `/api/filters/${filterId}`);
    if (!found) return showError(form, data);
    chosen = data.address_id;
    form.elements.namedItem("name").value = data.name;
    script.value = data.script;
    form.elements.namedItem("enabled").checked = data.enabled;
    form.elements.namedItem("position").value = String(data.position);
    document.getElementById("filter-title").textContent = data.name;
    document.title = `${data.name} · Mail`;
    if (query.get("saved")) {
      form.querySelector("#filter-status").textContent = `Saved ${data.name}.`;
      window.history.replaceState(null, "", `/filters/${filterId}`);
    }
  }
  // The account's addresses are in the page (mail/pages/panel.py): no call per domain.
  if (chosen) form.elements.namedItem("address_id").value = chosen;
  drawGutter();
  if (script.value) await validate();
}

await start();
