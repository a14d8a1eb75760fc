// List: a repeater of items with their own fields (which may be lists again).
// Add, remove, and reorder by dragging the handle or with the keyboard.
import { announce, button, h } from "../lib/dom.js";
import { moveButtons, moveInArray, reorderable } from "../lib/reorder.js";
import { labelOf } from "./basic.js";

export function list(def, value, createField) {
  const items = [];
  const legend = h("legend", {}, labelOf(def) + (def.required ? " (required)" : ""));
  const container = h("ol", { class: "items" });
  const errorEl = h("p", { class: "field-error", hidden: true });
  const add = button(`Add ${def.itemLabel || "an item"}`, () => {
    append({});
    changed();
    const last = items[items.length - 1];
    announce(`Item ${items.length} added`);
    const first = last.li.querySelector("input, textarea, select, [contenteditable=true], button:not(.handle)");
    if (first) first.focus();
  });
  add.setAttribute("aria-label", `Add an item to ${labelOf(def)}`);
  const wrap = h("fieldset", { class: "field" }, legend, def.help ? h("p", { class: "help" }, def.help) : null, container, h("div", { class: "actions" }, add), errorEl);
  const changed = () => wrap.dispatchEvent(new Event("input", { bubbles: true }));
  const name = (i) => `${labelOf(def)} item ${i + 1}`;
  const relabel = () => items.forEach((item, i) => {
    item.title.textContent = `Item ${i + 1}`;
    item.moves.label(name(i));
    item.remove.setAttribute("aria-label", `Remove ${name(i)}`);
  });
  const move = (from, to, byKeyboard) => {
    moveInArray(items, from, to);
    if (byKeyboard) {
      const node = container.children[from];
      node.remove();
      container.insertBefore(node, container.children[to] || null);
    }
    relabel();
    changed();
  };
  function append(itemValue) {
    const li = h("li", { class: "item" });
    const item = { li, widgets: {} };
    item.moves = moveButtons(() => items.indexOf(item), () => items.length, move, (i) => `Item ${i + 1}`);
    item.title = h("span", { class: "grow" });
    item.remove = button("Remove", () => {
      const at = items.indexOf(item);
      items.splice(at, 1);
      li.remove();
      relabel();
      changed();
      announce(`Item ${at + 1} removed`);
      add.focus();
    }, { class: "small danger" });
    li.append(h("div", { class: "item-head" }, item.title, item.moves.handle, item.moves.up, item.moves.down, item.remove));
    for (const sub of def.fields || []) {
      const widget = createField(sub, itemValue ? itemValue[sub.key] : undefined);
      item.widgets[sub.key] = widget;
      li.append(widget.el);
    }
    items.push(item);
    container.append(li);
    relabel();
  }
  for (const itemValue of value || []) append(itemValue);
  reorderable(container, { onMove: move });
  return {
    el: wrap,
    value: () =>
      items.map((item) => {
        const out = {};
        for (const [key, widget] of Object.entries(item.widgets)) out[key] = widget.value();
        return out;
      }),
    // "items.2.title": the title input of the third item.
    locate: (parts) => {
      if (!parts.length) return { wrap, input: add, label: labelOf(def) };
      const item = items[Number(parts[0])];
      if (!item) return { wrap, input: add, label: labelOf(def) };
      const widget = item.widgets[parts[1]];
      if (!widget) return { wrap, input: item.remove, label: `${name(Number(parts[0]))}` };
      const found = widget.locate(parts.slice(2));
      return found && { ...found, label: `${name(Number(parts[0]))} › ${found.label}` };
    },
  };
}
