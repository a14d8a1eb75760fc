// What every signed-in screen shares: signing out from the header.
import { ADMIN, api } from "./api.js";

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
