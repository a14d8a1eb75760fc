// Referrals: the page is read on the server; this adds the Copy button.
const input = document.getElementById("referral-url");
const status = document.getElementById("copy-status");
const copy = document.getElementById("copy-link");
copy.hidden = false;

copy.addEventListener("click", async () => {
  input.select();
  try {
    await navigator.clipboard.writeText(input.value);
    status.textContent = "Copied.";
  } catch {
    // No clipboard permission (an insecure origin, say): the link stays selected.
    status.textContent = "Selected: press Ctrl+C (⌘C) to copy.";
  }
});
