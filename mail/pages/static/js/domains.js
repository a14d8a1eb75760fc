// Domains: add one (then go to its page), and the list through GET /api/domains.

import { api, fields, onSubmit, showError } from "./common.js";
import { liveList, when } from "./domains_shared.js";

const words = JSON.parse(document.getElementById("domains-table").dataset.words);

liveList({
  id: "domains",
  path: "/api/domains",
  noun: "domain",
  plural: "domains",
  formats: {
    badge(el, status) {
      el.className = `badge badge-${status}`;
      el.textContent = words[status] || status;
    },
    when(el, value) {
      el.textContent = when(value);
    },
  },
});

const add = document.getElementById("domain-add");
onSubmit(add, async () => {
  const { ok, status, data } = await api("POST", "/api/domains", fields(add, ["name", "description"]));
  if (!ok) {
    // Every refusal but a description's is about the name ("name: ...", "already hosted").
    const field = (data.message || "").startsWith("description") ? "description" : "name";
    return showError(add, data, status === 0 ? undefined : field);
  }
  // Its page has the records to publish next.
  window.location.assign(`/domains/${data.id}`);
});
