import { api, fields, goNext, onSubmit, showError } from "./common.js";

const form = document.getElementById("signin");
const totpStep = document.getElementById("totp-step");
const totpInput = document.getElementById("totp_code");

onSubmit(form, async () => {
  const body = fields(form, ["email", "password", "totp_code"]);
  const { ok, data } = await api("POST", "/api/auth/login", body);
  if (ok) return goNext(form);
  // Password right, two-factor on: the API asks for the code; show the step.
  if (data.name === "missing_required_field" && totpStep.hidden) {
    totpStep.hidden = false;
    totpInput.required = true;
    totpInput.focus();
    return;
  }
  showError(form, data);
});
