// One input per field type (the eighteen of content/types/fields.py).
import { BASIC } from "./basic.js";
import { jsonField, markdown } from "./code.js";
import { list } from "./list.js";
import { gallery, media } from "./media.js";
import { reference } from "./reference.js";
import { richtext } from "./richtext.js";

export { ClientProblem } from "./code.js";

const BUILDERS = {
  ...BASIC,
  richtext,
  markdown,
  json: jsonField,
  media,
  gallery,
  reference,
  list: (def, value) => list(def, value, createField),
};

export function createField(def, value) {
  const build = BUILDERS[def.type] || BASIC.text;
  return build(def, value);
}

// The widgets of a set of fields, their values, and the input named by an error key.
export class FieldSet {
  constructor(defs, values) {
    this.widgets = new Map();
    this.els = [];
    for (const def of defs) {
      const widget = createField(def, values ? values[def.key] : undefined);
      this.widgets.set(def.key, widget);
      this.els.push(widget.el);
    }
  }

  // {values, problems}: problems are the client's own refusals (JSON that does not parse).
  collect() {
    const values = {};
    const problems = [];
    for (const [key, widget] of this.widgets) {
      try {
        values[key] = widget.value();
      } catch (error) {
        problems.push({ key, message: error.message });
      }
    }
    return { values, problems };
  }

  locate(key) {
    const [head, ...rest] = key.split(".");
    const widget = this.widgets.get(head);
    return widget ? widget.locate(rest) : null;
  }
}
