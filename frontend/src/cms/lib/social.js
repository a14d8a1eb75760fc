// What the social screens share: their own links, status badges, and each
// network's rules counted the way that network counts (content/social/rules.py
// is the authority; this mirrors it so the composer shows, while typing,
// exactly what the API would refuse at save).
import { ADMIN, can } from "./api.js";
import { h, replace } from "./dom.js";

export const STATUSES = ["draft", "scheduled", "publishing", "published", "partial", "failed"];

// The social screens' own navigation: what the person's role allows.
export function socialNav(current) {
  const links = [
    ["", "Overview", true],
    ["/posts", "Posts", true],
    ["/calendar", "Calendar", true],
    ["/settings", "Networks and accounts", can("social.manage")],
  ];
  return h(
    "nav",
    { class: "subnav", "aria-label": "Social" },
    h(
      "ul",
      {},
      links
        .filter(([, , allowed]) => allowed)
        .map(([path, label]) => h("li", {}, h("a", { href: `${ADMIN}/social${path}`, "aria-current": path === current ? "page" : null }, label))),
    ),
  );
}

// Back from a network's consent page: the callback sends the browser to the
// admin with ?social=connected&account= or ?social=error&network=&reason=.
export function consentOutcome(el) {
  const back = new URLSearchParams(location.search);
  if (back.get("social") === "connected") {
    replace(el, h("p", { class: "notice", role: "status" }, "The account is connected."));
  } else if (back.get("social") === "error") {
    replace(el, h("div", { class: "alert", role: "alert" }, h("p", {}, `${back.get("network") || "The network"} did not connect: ${back.get("reason") || "no reason given"}`)));
  }
  if (back.has("social")) history.replaceState(null, "", location.pathname + location.hash);
}

export function statusBadge(status) {
  return h("span", { class: `badge social-${status}` }, status);
}

export function postHref(id) {
  return `${ADMIN}/social/posts/${encodeURIComponent(id)}`;
}

export function excerpt(text, size = 80) {
  const one = (text || "").replace(/\s+/g, " ").trim();
  if (!one) return "(media only)";
  const points = [...one]; // never cut an emoji (a surrogate pair) in half
  return points.length > size ? `${points.slice(0, size - 1).join("")}…` : one;
}

// --- the networks' rules ---------------------------------------------------------

const URL_RE = /https?:\/\/\S+/g;
// twitter-text v3: these code points weigh 1, every other one 2; a link weighs 23.
const X_LIGHT = [
  [0, 4351],
  [8192, 8205],
  [8208, 8223],
  [8242, 8247],
];
const graphemes = typeof Intl !== "undefined" && Intl.Segmenter ? new Intl.Segmenter(undefined, { granularity: "grapheme" }) : null;

const codePoints = (text) => [...text].length;

export function sentText(rules, text, link) {
  if (link && rules.link === "text" && !text.includes(link)) return text ? `${text}\n\n${link}` : link;
  return text;
}

export function measure(rules, text) {
  switch (rules.counting) {
    case "weighted": {
      let total = 0;
      for (const piece of text.split(URL_RE)) {
        for (const ch of piece) {
          const code = ch.codePointAt(0);
          total += X_LIGHT.some(([a, b]) => a <= code && code <= b) ? 1 : 2;
        }
      }
      return total + 23 * (text.match(URL_RE) || []).length;
    }
    case "links23":
      return codePoints(text.replace(URL_RE, "x".repeat(23)));
    case "characters":
      return codePoints(text);
    case "graphemes":
      return graphemes ? [...graphemes.segment(text)].length : codePoints(text);
    default:
      return new TextEncoder().encode(text).length;
  }
}

export const UNITS = {
  weighted: "weighted characters (links count 23)",
  links23: "characters (links count 23)",
  characters: "characters",
  graphemes: "graphemes",
  bytes: "bytes",
};

// Every way a network would refuse the post: [{key, message}] as SOCIAL_INVALID names them.
// media: [{type, size}] in the post's order.
export function problemsFor(network, rules, rawText, link, media) {
  const text = rawText.trim();
  const out = [];
  const counted = measure(rules, sentText(rules, text, link));
  if (counted > rules.maxText) out.push({ key: "text", message: `${network}: at most ${rules.maxText} ${UNITS[rules.counting]}, this is ${counted}` });
  if (rules.maxTitle) {
    const title = text.split("\n", 1)[0];
    if (!title.trim()) out.push({ key: "text", message: `${network}: the first line is the title` });
    else if (codePoints(title) > rules.maxTitle) out.push({ key: "text", message: `${network}: the title (first line) is ${rules.maxTitle} at most` });
  }
  const isImage = (m) => m.type.startsWith("image/");
  const isVideo = (m) => m.type.startsWith("video/");
  media.forEach((m, i) => {
    if (!isImage(m) && !isVideo(m)) out.push({ key: `media.${i}`, message: `${network}: only images or a video` });
    else if ((isImage(m) && !rules.imageTypes.includes(m.type)) || (isVideo(m) && !rules.videoTypes.includes(m.type))) out.push({ key: `media.${i}`, message: `${network}: does not take ${m.type}` });
    else if (isImage(m) && rules.maxImageBytes && m.size > rules.maxImageBytes) out.push({ key: `media.${i}`, message: `${network}: an image is ${rules.maxImageBytes} bytes at most` });
  });
  const images = media.filter(isImage).length;
  const videos = media.filter(isVideo).length;
  if (images && videos) out.push({ key: "media", message: `${network}: images or a video, not both` });
  if (videos > rules.maxVideos) out.push({ key: "media", message: `${network}: one video per post` });
  if (images > rules.maxImages) out.push({ key: "media", message: `${network}: ${rules.maxImages === 0 ? "takes no images" : `${rules.maxImages} images at most`}` });
  if (rules.mediaRequired && !media.length) out.push({ key: "media", message: `${network}: needs ${rules.maxImages === 0 ? "a video" : "an image or a video"}` });
  return { counted, problems: out };
}

// A date as the calendar and the schedule input use it: local, YYYY-MM-DD.
export function localDay(date) {
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

// The value a datetime-local input takes for a moment, in the browser's zone.
export function localInput(date) {
  const pad = (n) => String(n).padStart(2, "0");
  return `${localDay(date)}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}
