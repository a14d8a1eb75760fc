// The panel's navigation (templates/base.html): without this module each group
// shows its name and its links. With it, a disclosure button per group opens
// that group's links at wide widths, and one Menu button opens every group on a
// phone (app.css decides which by width). The disclosure pattern of the ARIA
// Authoring Practices, not role="menu": these are links, read and tabbed as
// links. Escape closes what is open and gives focus back to its button; a
// click elsewhere, or focus leaving it, closes it too.

const nav = document.querySelector("nav.sections");

if (nav) {
  const menu = nav.querySelector(".menu-button");
  const buttons = [...nav.querySelectorAll(".group-button")];

  const open = (button, yes) => button.setAttribute("aria-expanded", String(yes));
  const isOpen = (button) => button.getAttribute("aria-expanded") === "true";
  const closeGroups = (except) => buttons.forEach((b) => b !== except && open(b, false));

  for (const button of [menu, ...buttons]) button.hidden = false;
  nav.classList.add("scripted");

  menu.addEventListener("click", () => {
    open(menu, !isOpen(menu));
    closeGroups();
  });
  for (const button of buttons) {
    button.addEventListener("click", () => {
      closeGroups(button);
      open(button, !isOpen(button));
    });
  }

  nav.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    const group = buttons.find(isOpen);
    const back = group || (isOpen(menu) ? menu : null);
    if (!back) return;
    event.preventDefault();
    open(back, false);
    back.focus();
  });

  // Focus moving out of a group (Tab past its last link, to the next group's
  // button) closes that group; out of the navigation, the Menu panel too.
  nav.addEventListener("focusout", (event) => {
    const to = event.relatedTarget;
    if (to === null) return; // the window lost focus: leave things as they are
    for (const button of buttons) {
      if (!button.closest(".group").contains(to)) open(button, false);
    }
    if (!nav.contains(to)) open(menu, false);
  });
  document.addEventListener("click", (event) => {
    if (nav.contains(event.target)) return;
    closeGroups();
    open(menu, false);
  });
}
