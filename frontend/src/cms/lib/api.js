// Calling the CMS admin API from a screen: JSON in and out, with the session cookie.
// The browser adds Origin and Sec-Fetch-Site, which the API's CSRF check reads.

const page = document.body.dataset;
export const API = page.api;
export const ADMIN = page.admin;
export const me = page.user ? JSON.parse(page.user) : null;

export function can(permission) {
  return Boolean(me && me.permissions.includes(permission));
}

// { ok, status, data }: data is the parsed JSON answer ({} when there is none).
export async function api(method, path, payload) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (payload instanceof FormData) {
    init.body = payload;
  } else if (payload !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(payload);
  }
  let response;
  try {
    response = await fetch(API + path, init);
  } catch {
    return { ok: false, status: 0, data: { error: "The server could not be reached. Try again.", code: "OFFLINE", details: {} } };
  }
  let data = {};
  if (response.status !== 204) {
    try {
      data = await response.json();
    } catch {
      data = {};
    }
  }
  if (response.status === 401 && me) {
    // The session ended elsewhere: sign in again and come back here.
    const next = location.pathname + location.search;
    location.assign(`${ADMIN}/signin?next=${encodeURIComponent(next)}`);
  }
  return { ok: response.ok, status: response.status, data };
}

export function messageOf(data) {
  const text = (data && data.error) || "Something went wrong.";
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// The {key, message} list of a VALIDATION_FAILED (or CONFLICT) answer.
export function fieldProblems(data) {
  const fields = data && data.details && data.details.fields;
  return Array.isArray(fields) ? fields : [];
}

export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") search.set(key, value);
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

// Loaders that a filter, a picker or a search box can start again before the
// last answer came back: only the newest call may draw, so a slow stale answer
// never replaces a newer one (or a form the editor has started typing into).
//   const fresh = latest();
//   async function load() { const mine = fresh(); const r = await api(...); if (!mine()) return; ... }
export function latest() {
  let newest = 0;
  return () => {
    const ticket = ++newest;
    return () => ticket === newest;
  };
}
