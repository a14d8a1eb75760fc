// A domain's addresses: create one (then go to its page), and the list
// through GET /api/domains/:id/addresses.

import { api, fields, onSubmit, showError } from "./common.js";
import { liveList, quotaBytes, size, when } from "./domains_shared.js";

const form = document.getElementById("address-create");
const domainId = form.dataset.domain;

liveList({
  id: "addresses",
  path: `/api/domains/${domainId}/addresses`,
  noun: "address",
  plural: "addresses",
  formats: {
    quota(el, value) {
      el.textContent = size(value);
    },
    when(el, value) {
      el.textContent = when(value);
    },
  },
});

onSubmit(form, async () => {
  const body = fields(form, ["local_part", "password", "display_name", "recovery_email"]);
  const quota = quotaBytes(form.elements.namedItem("quota_bytes"));
  if (Number.isNaN(quota)) {
    return showError(form, { message: "quota_bytes must be a whole number of MiB (0 = unlimited)" }, "quota_bytes");
  }
  if (quota !== "") body.quota_bytes = quota;
  const { ok, data } = await api("POST", `/api/domains/${domainId}/addresses`, body);
  if (!ok) return showError(form, data, data.name === "conflict" ? "local_part" : undefined);
  window.location.assign(`/addresses/${data.id}`);
});
