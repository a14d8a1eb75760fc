// Reordering a list by drag (SortableJS, on a handle) and by keyboard (buttons
// and Alt+Arrow keys on the handle), announced to screen readers.
import Sortable from "sortablejs";
import { announce, h } from "./dom.js";

// items: the array being ordered; container: the element whose children
// follow it; onMove(from, to) after every move; label(i) names an item.
// draggable: a selector of the children that move (the others keep their
// place); from and to then count those children only.
export function reorderable(container, { handle = ".handle", onMove, draggable }) {
  Sortable.create(container, {
    handle,
    animation: 120,
    ...(draggable ? { draggable } : {}),
    onEnd: (event) => {
      const from = draggable ? event.oldDraggableIndex : event.oldIndex;
      const to = draggable ? event.newDraggableIndex : event.newIndex;
      if (from !== to) onMove(from, to, false);
    },
  });
}

export function moveButtons(getIndex, count, move, name) {
  const up = h("button", { type: "button", class: "small" }, "Move up");
  const down = h("button", { type: "button", class: "small" }, "Move down");
  const go = (delta, btn) => {
    const from = getIndex();
    const to = from + delta;
    if (to < 0 || to >= count()) return;
    move(from, to, true);
    announce(`${name(to)} moved to position ${to + 1} of ${count()}`);
    btn.focus();
  };
  up.addEventListener("click", () => go(-1, up));
  down.addEventListener("click", () => go(1, down));
  const handle = h("button", { type: "button", class: "small handle", title: "Drag to reorder, or press Alt+Up / Alt+Down" }, "⇅ Drag");
  handle.addEventListener("keydown", (event) => {
    if (event.altKey && (event.key === "ArrowUp" || event.key === "ArrowDown")) {
      event.preventDefault();
      go(event.key === "ArrowUp" ? -1 : 1, handle);
    }
  });
  return { up, down, handle, label: (text) => {
    up.setAttribute("aria-label", `Move ${text} up`);
    down.setAttribute("aria-label", `Move ${text} down`);
    handle.setAttribute("aria-label", `Reorder ${text}: drag, or Alt+Up and Alt+Down`);
  } };
}

export function moveInArray(array, from, to) {
  const [item] = array.splice(from, 1);
  array.splice(to, 0, item);
}
