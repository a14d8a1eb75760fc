// Content types: the list, and the way to the field builder.
import "../lib/shell.js";
import { ADMIN, api, can, messageOf } from "../lib/api.js";
import { h, replace, screenRoot } from "../lib/dom.js";
import { cells, table } from "../lib/table.js";

const root = screenRoot();
const list = h("div");
replace(root, can("types.manage") ? h("p", {}, h("a", { class: "button-link", href: `${ADMIN}/types/new` }, "New content type")) : null, list);
const { ok, data } = await api("GET", "/types");
if (!ok) replace(list, h("p", { class: "alert", role: "alert" }, messageOf(data)));
else if (!data.data.length) replace(list, h("p", { class: "muted" }, "No content types yet. A type declares the fields its entries hold."));
else
  replace(
    list,
    table(
      "Content types",
      ["Type", "Name", "Fields", "Kind"],
      data.data.map((t) =>
        cells(
          h("a", { href: `${ADMIN}/types/${t.name}` }, t.label || t.name),
          h("code", {}, t.name),
          String(t.fields.length),
          t.single ? "single entry" : "collection",
        ),
      ),
    ),
  );
