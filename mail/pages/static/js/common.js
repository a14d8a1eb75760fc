// Shared by every screen: calling the API and showing its answers in a form.

// A 429 (rate_limit_exceeded) names in Retry-After when to come back: the
// request did nothing, so it is sent again then, up to RETRIES times; a wait
// longer than MAX_WAIT_SECONDS (a sign-in throttle of minutes) is not waited
// out here but said in the message. docs/mail.md, "Rate limits".
const RETRIES = 3;
const MAX_WAIT_SECONDS = 10;

// Seconds from a Retry-After value: delay-seconds or an HTTP date.
export function retryAfterSeconds(value) {
  if (!value) return 1;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const when = Date.parse(value);
  return Number.isNaN(when) ? 1 : Math.max(0, Math.ceil((when - Date.now()) / 1000));
}

function tooMany(seconds) {
  const wait = seconds < 60 ? `${Math.max(1, seconds)} second${seconds === 1 ? "" : "s"}` : `${Math.ceil(seconds / 60)} minutes`;
  return `Too many requests just now. Wait ${wait} and try again.`;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Sends a same-origin request with the session cookie and reads its JSON
// answer, waiting out 429s as above. `init` is fetch's; the body must be
// sendable twice (a string or FormData).
export async function send(path, init) {
  for (let attempt = 0; ; attempt++) {
    let response;
    try {
      response = await fetch(path, { credentials: "same-origin", ...init });
    } catch {
      return understood({ ok: false, status: 0, data: {} });
    }
    let data = {};
    if (response.status !== 204) {
      try {
        data = await response.json();
      } catch {
        data = {};
      }
    }
    if (response.status !== 429) return understood({ ok: response.ok, status: response.status, data });
    const wait = retryAfterSeconds(response.headers.get("Retry-After"));
    if (attempt >= RETRIES || wait > MAX_WAIT_SECONDS) {
      return understood({ ok: false, status: 429, data: { ...data, message: tooMany(wait) } });
    }
    // A little spread, so the tabs of one account do not all come back at once.
    await sleep(wait * 1000 + Math.random() * 250);
  }
}

// Calls a same-origin JSON route with the session cookie. The browser adds
// Origin and Sec-Fetch-Site, which the CSRF check reads (common/csrf.py).
export async function api(method, path, body) {
  const init = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  return send(path, init);
}

// --- answers every screen treats alike -------------------------------------
// An ended session, a plan without the feature, a rate limit still on after
// send() waited it out, a server that failed or was not reached: every screen
// module calls the API through send() (or api()), which runs each answer
// through understood(), so all of them behave the same and data.message is
// always a sentence for a person, never the raw answer. docs/mail.md, "Pages".

const PLAN_MESSAGE = "Your plan does not include this.";
const GENERAL = new Set(["unauthorized", "plan_required", "rate_limit_exceeded", "application_error"]);

// Where to sign in again and come back to this very page (path and query: the
// sign-in page keeps only a same-origin path, mail/pages/security.py).
export function signInAgain() {
  return `/signin?next=${encodeURIComponent(location.pathname + location.search)}`;
}

// Pages for a signed-in person carry data-session="required" (routes.signed_in):
// there a 401 can only mean the session ended (revoked elsewhere, expired,
// signed out in another tab). On sign-in itself a 401 is a wrong password.
function sessionRequired() {
  return document.body.dataset.session === "required";
}

function understood(result) {
  const { status, data } = result;
  if (result.ok) return result;
  let message = data.message;
  if (status === 0) message = "The server could not be reached. Check your connection and try again.";
  else if (status === 401 && sessionRequired()) {
    message = "Your session has ended. Taking you to sign in again…";
    window.location.assign(signInAgain());
  } else if (status === 402) {
    // The API's own words name the feature and the plan ("the webhooks
    // feature is not included in your plan (Starter); upgrade to use it");
    // say() adds the link to Billing.
    message = data.message ? `${data.message}.` : PLAN_MESSAGE;
  } else if (status >= 500) message = "The server failed to do this. Try again in a moment.";
  return { ...result, data: { ...data, message: message || messageOf(data) } };
}

// The words of an error in either service's shape (mail's or OAuth's).
export function messageOf(data) {
  const words = data.message || data.error_description || data.error;
  return typeof words === "string" && words ? words : "Something went wrong. Try again.";
}

// Shows an API's refusal in a box (an error line, a status line): its words,
// and for a plan that lacks the feature a link to where plans change.
export function say(box, data) {
  const message = messageOf(data);
  box.textContent = message.charAt(0).toUpperCase() + message.slice(1);
  if (data.name === "plan_required" || data.statusCode === 402) {
    const link = document.createElement("a");
    link.href = "/billing";
    link.textContent = "See the plans on Billing";
    box.append(" ", link);
  }
}

// Shows an error under the form and ties it to its field: the one given, or
// the one the message names ("password is too short").
export function showError(form, data, field) {
  const box = form.querySelector(".error");
  const message = messageOf(data);
  say(box, data);
  form.querySelectorAll("[aria-invalid]").forEach((el) => el.removeAttribute("aria-invalid"));
  // An answer about the session, the plan, the rate or the server is no field's fault.
  const general = !data.name && !data.error ? true : GENERAL.has(data.name);
  const named = general
    ? null
    : field
    ? form.elements.namedItem(field)
    : [...form.elements].find((el) => el.name && message.startsWith(el.name + " "));
  if (named) {
    named.setAttribute("aria-invalid", "true");
    const ids = new Set((named.getAttribute("aria-describedby") || "").split(" ").filter(Boolean));
    ids.add(box.id);
    named.setAttribute("aria-describedby", [...ids].join(" "));
    named.focus();
  }
}

export function clearError(form) {
  form.querySelectorAll(".error, .status").forEach((box) => (box.textContent = ""));
  form.querySelectorAll("[aria-invalid]").forEach((el) => el.removeAttribute("aria-invalid"));
}

// The form's non-empty fields as a JSON object.
export function fields(form, names) {
  const out = {};
  for (const name of names) {
    const el = form.elements.namedItem(name);
    if (el && el.value !== "") out[name] = el.value;
  }
  return out;
}

// Runs `submit` on the form's submit, with the button disabled meanwhile.
export function onSubmit(form, submit) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const buttons = form.querySelectorAll("button");
    buttons.forEach((b) => (b.disabled = true));
    clearError(form);
    try {
      await submit(event);
    } finally {
      buttons.forEach((b) => (b.disabled = false));
    }
  });
}

// After a one-time action succeeded: only its message stays.
export function finish(form, message) {
  form.querySelectorAll(".field, button").forEach((el) => (el.hidden = true));
  const status = form.querySelector(".status");
  status.textContent = message;
  status.setAttribute("tabindex", "-1");
  status.focus();
}

// The page to go to next: the server already kept only same-origin paths.
export function goNext(form) {
  window.location.assign(form.dataset.next || "/");
}

// A Copy button for a read-only input (a key or secret shown once, a link):
// copies its value, or leaves it selected where the clipboard is refused
// (an insecure origin, say), and says which in the status line.
export function copyButton(button, input, status) {
  button.addEventListener("click", async () => {
    input.select();
    try {
      await navigator.clipboard.writeText(input.value);
      status.textContent = "Copied.";
    } catch {
      status.textContent = "Selected: press Ctrl+C (⌘C) to copy.";
    }
  });
}
