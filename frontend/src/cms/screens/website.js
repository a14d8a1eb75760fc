// Website parts: the shared parts the host's manifest declares (GET /api/website),
// each with its editor (lib/website-parts.js), saved through its ordinary route.
import "../lib/shell.js";
import { ADMIN, api, messageOf } from "../lib/api.js";
import { h, replace, screenRoot } from "../lib/dom.js";
import { partEditor } from "../lib/website-parts.js";

const root = screenRoot();

const { ok, data } = await api("GET", "/website");
if (!ok) {
  replace(root, h("p", { class: "alert", role: "alert" }, messageOf(data)));
} else if (!data.parts.length) {
  replace(root, h("p", { class: "muted" }, "The site declares no shared parts."));
} else {
  const cards = [];
  for (const part of data.parts) {
    const id = `part-${part.id}`;
    const card = h("section", { class: "card part", "aria-labelledby": id }, h("h2", { id }, part.label), part.description ? h("p", { class: "help" }, part.description) : null);
    cards.push(card);
    await partEditor(part, card);
  }
  const intro = h("p", { class: "help" }, "The parts every page shares. ", data.previewUrl ? h("a", { href: `${ADMIN}/visual` }, "See them in the visual editor") : null);
  replace(root, intro, cards);
}
