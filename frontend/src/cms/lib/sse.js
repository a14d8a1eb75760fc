// Reading a server-sent event stream from a POST (the assistant's turns and the
// field assistant): EventSource only GETs, so fetch reads the body as it comes.
// Refusals known before the stream starts are the API's ordinary JSON errors.
import { ADMIN, API, me } from "./api.js";

// One "event: name\ndata: json" block, or null for a comment or keep-alive.
function parseBlock(block) {
  let name = "message";
  const data = [];
  for (const line of block.split(/\r?\n/)) {
    if (line.startsWith("event:")) name = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  if (!data.length) return null;
  try {
    return { name, data: JSON.parse(data.join("\n")) };
  } catch {
    return null;
  }
}

// Calls onEvent(name, data) for each event as it arrives; resolves to
// {ok, status, data} (data: the JSON refusal when the stream never started).
export async function postStream(path, payload, onEvent, signal) {
  let response;
  try {
    response = await fetch(API + path, {
      method: "POST",
      credentials: "same-origin",
      headers: { Accept: "text/event-stream", "Content-Type": "application/json" },
      body: JSON.stringify(payload),
      signal,
    });
  } catch (error) {
    const stopped = error && error.name === "AbortError";
    return { ok: false, status: 0, data: { error: stopped ? "Stopped." : "The server could not be reached. Try again.", code: stopped ? "ABORTED" : "OFFLINE", details: {} } };
  }
  const type = response.headers.get("Content-Type") || "";
  if (!response.ok || !type.startsWith("text/event-stream")) {
    let data = {};
    try {
      data = await response.json();
    } catch {
      data = {};
    }
    if (response.status === 401 && me) location.assign(`${ADMIN}/signin?next=${encodeURIComponent(location.pathname + location.search)}`);
    return { ok: false, status: response.status, data };
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let match;
      while ((match = /\r?\n\r?\n/.exec(buffer))) {
        const event = parseBlock(buffer.slice(0, match.index));
        buffer = buffer.slice(match.index + match[0].length);
        if (event) onEvent(event.name, event.data);
      }
    }
  } catch (error) {
    const stopped = error && error.name === "AbortError";
    return { ok: false, status: 0, data: { error: stopped ? "Stopped." : "The answer was cut off. Try again.", code: stopped ? "ABORTED" : "OFFLINE", details: {} } };
  }
  const rest = parseBlock(buffer);
  if (rest) onEvent(rest.name, rest.data);
  return { ok: true, status: response.status, data: {} };
}
