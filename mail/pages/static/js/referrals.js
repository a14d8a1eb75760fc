// Referrals: the page is read on the server; this adds the Copy button.
import { copyButton } from "./common.js";

const copy = document.getElementById("copy-link");
copy.hidden = false;
copyButton(copy, document.getElementById("referral-url"), document.getElementById("copy-status"));
