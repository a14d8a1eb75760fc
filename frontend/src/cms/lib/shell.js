// What every signed-in screen shares: the navigation's menu button on a narrow
// screen, and signing out from the header.
import { ADMIN, api } from "./api.js";

// On a narrow screen the grouped navigation folds behind one button that names
// where you are; a wide screen shows it as a sidebar and hides the button (CSS).
const nav = document.querySelector(".sections-nav");
const menu = nav && nav.querySelector(".menu-button");
if (menu) {
  const here = nav.querySelector("a[aria-current]");
  menu.textContent = here ? `Menu: ${here.textContent}` : "Menu";
  menu.hidden = false;
  nav.classList.add("folding");
  const show = (open) => {
    menu.setAttribute("aria-expanded", String(open));
    nav.classList.toggle("open", open);
  };
  menu.addEventListener("click", () => show(menu.getAttribute("aria-expanded") !== "true"));
  nav.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && nav.classList.contains("open")) {
      show(false);
      menu.focus();
    }
  });
}

const signOut = document.getElementById("sign-out");
if (signOut) {
  signOut.addEventListener("click", async () => {
    signOut.disabled = true;
    await api("POST", "/auth/logout");
    location.assign(`${ADMIN}/signin`);
  });
}

// The assistant's tray is on every signed-in screen.
import "./tray.js";
