// A refused save shown the way the spec asks: each named input marked
// (details.fields: [{key, message}]) and a summary read out by screen readers.
import { fieldProblems, messageOf } from "./api.js";
import { h, replace, setFieldError } from "./dom.js";

export class Problems {
  // box: an element with role=alert; locate(key) -> {wrap, input, label} | null
  constructor(box, locate) {
    this.box = box;
    this.locate = locate;
    this.marked = [];
  }

  clear() {
    for (const { wrap, input } of this.marked) setFieldError(wrap, input, "");
    this.marked = [];
    replace(this.box);
    this.box.hidden = true;
  }

  // Returns true when something was shown.
  show(data) {
    this.clear();
    const problems = fieldProblems(data);
    const items = [];
    let first = null;
    for (const { key, message } of problems) {
      const found = this.locate(key);
      const text = message.charAt(0).toUpperCase() + message.slice(1);
      if (found) {
        setFieldError(found.wrap, found.input, text);
        this.marked.push(found);
        first = first || found.input;
        const link = h("a", { href: `#${found.input.id}` }, `${found.label || key}: ${text}`);
        link.addEventListener("click", (event) => {
          event.preventDefault();
          found.input.focus();
        });
        items.push(h("li", {}, link));
      } else {
        items.push(h("li", {}, `${key}: ${text}`));
      }
    }
    const heading = problems.length
      ? `Nothing was saved: ${problems.length === 1 ? "one field needs" : `${problems.length} fields need`} attention.`
      : messageOf(data);
    replace(this.box, h("p", {}, heading), items.length ? h("ul", {}, items) : null);
    this.box.hidden = false;
    if (first) first.focus();
    return true;
  }

  message(text) {
    this.clear();
    replace(this.box, h("p", {}, text));
    this.box.hidden = false;
  }
}
