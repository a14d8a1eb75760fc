// Assistant settings (settings.manage): the one model provider (kind, model,
// key written but never shown back, base URL for the kinds that have one,
// OAuth when the server offers it), the connection test with its named
// reason, disconnect; the monthly token budget; the visitor bubble.
import "../lib/shell.js";
import { api, messageOf } from "../lib/api.js";
import { alertBox, announce, button, copyButton, h, labelled, replace, screenRoot, statusLine, when } from "../lib/dom.js";
import { Problems } from "../lib/problems.js";

const root = screenRoot();

// What each failure of the connection test means, in the person's words.
const PROBLEMS = {
  unreachable: "The server could not be reached at that address.",
  auth: "The key (or sign-in) was refused by the provider.",
  model_not_found: "The provider does not know that model name.",
  rate_limited: "The provider is limiting requests right now; try again later.",
  no_streaming: "The provider answered, but not as a stream.",
  no_tool_calling: "The model answered, but does not call tools, which the assistant needs.",
  provider_error: "The provider answered with an error.",
};

async function start() {
  const [provider, budget, bubble] = await Promise.all([api("GET", "/assistant/provider"), api("GET", "/assistant/budget"), api("GET", "/assistant/bubble")]);
  if (!provider.ok) return replace(root, h("p", { class: "alert", role: "alert" }, messageOf(provider.data)));
  replace(root, providerCard(provider.data), budget.ok ? budgetCard(budget.data) : null, bubble.ok ? bubbleCard(bubble.data) : null);
  // The OAuth consent's return leg lands here once: say how it went, then tidy the address.
  const params = new URLSearchParams(location.search);
  if (params.has("oauth")) {
    const done = params.get("oauth") === "connected";
    const text = done ? "The provider is connected." : `Connecting the provider did not finish: ${params.get("reason") || "no reason given"}.`;
    root.prepend(h("p", { class: done ? "notice" : "alert", role: done ? "status" : "alert" }, text));
    announce(text);
    history.replaceState(null, "", location.pathname);
  }
}

// --- the provider ------------------------------------------------------------------

function providerCard(state) {
  const section = h("section", { class: "card", "aria-labelledby": "provider-h" });
  const draw = (current) => replace(section, ...providerParts(current, draw));
  draw(state);
  return section;
}

function providerParts(state, redraw) {
  const provider = state.provider;
  const kinds = state.kinds;
  const kindOf = (name) => kinds.find((k) => k.kind === name) || kinds[0];
  const inputs = {
    kind: h("select", {}, kinds.map((k) => h("option", { value: k.kind, selected: provider && provider.kind === k.kind }, k.label))),
    model: h("input", { type: "text", value: provider ? provider.model : "", maxlength: 200, spellcheck: "false", autocomplete: "off", required: true }),
    baseUrl: h("input", { type: "url", value: provider && provider.baseUrl ? provider.baseUrl : "", maxlength: 500, spellcheck: "false", inputmode: "url" }),
    apiKey: h("input", { type: "password", value: "", maxlength: 4000, autocomplete: "new-password", spellcheck: "false" }),
  };
  const wraps = {
    kind: labelled("Provider", inputs.kind),
    model: labelled("Model", inputs.model, { help: "The model's name as the provider spells it, e.g. gpt-4.1-mini, claude-sonnet-4-5 or llama3.1." }),
    baseUrl: labelled("Base URL", inputs.baseUrl),
    apiKey: labelled("API key", inputs.apiKey, {
      help: provider && provider.keyHint ? `A key ending ${provider.keyHint} is stored (never shown again). Enter it again, or a new one, to save these settings.` : "Stored sealed and never shown again.",
    }),
  };
  const box = alertBox();
  const problems = new Problems(box, (key) => (wraps[key] ? { wrap: wraps[key], input: inputs[key], label: wraps[key].querySelector("label").textContent } : null));
  const status = statusLine();
  const oauth = button("Connect with the provider's sign-in", () => startOauth(inputs, problems), { id: "provider-oauth" });
  const adapt = () => {
    const kind = kindOf(inputs.kind.value);
    wraps.baseUrl.hidden = !kind.hasUrl;
    inputs.baseUrl.placeholder = kind.defaultUrl || "";
    const help = wraps.baseUrl.querySelector(".help");
    if (help) help.remove();
    wraps.apiKey.hidden = !kind.needsKey;
    oauth.hidden = !kind.oauth;
  };
  inputs.kind.addEventListener("change", adapt);
  adapt();
  const form = h(
    "form",
    { novalidate: true, "aria-label": "Model provider" },
    box,
    h("div", { class: "row" }, wraps.kind, wraps.model),
    wraps.baseUrl,
    wraps.apiKey,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, provider ? "Save and reconnect" : "Connect"), oauth),
    status,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const kind = kindOf(inputs.kind.value);
    const body = { kind: kind.kind, model: inputs.model.value.trim() };
    if (kind.hasUrl && inputs.baseUrl.value.trim()) body.baseUrl = inputs.baseUrl.value.trim();
    if (kind.needsKey) body.apiKey = inputs.apiKey.value;
    const { ok, data } = await api("PUT", "/assistant/provider", body);
    if (!ok) return problems.show(data);
    problems.clear();
    redraw(data);
    announce(`Connected ${kind.label}: run the connection test`);
    document.getElementById("provider-test").focus();
  });
  return [
    h("h2", { id: "provider-h" }, "Model provider"),
    h("p", { class: "muted" }, "One provider at a time. The assistant never sends it your keys or secrets."),
    provider ? connected(provider, kindOf(provider.kind), redraw) : h("p", {}, "No provider is connected: the assistant cannot answer yet."),
    provider ? h("h3", {}, "Change the connection") : null,
    form,
  ];
}

function connected(provider, kind, redraw) {
  const result = h("div", { id: "provider-test-result", role: "status" });
  const last = provider.test;
  if (last) replace(result, testLine(last.ok, last.problem, null, last.at));
  const test = button("Test the connection", async () => {
    test.disabled = true;
    replace(result, h("p", { class: "muted" }, "Testing: asking the model to call a test tool…"));
    const { ok, data } = await api("POST", "/assistant/provider/test");
    test.disabled = false;
    if (!ok) return replace(result, h("p", { class: "alert" }, messageOf(data)));
    replace(result, testLine(data.ok, data.problem, data.message));
  }, { id: "provider-test", class: "primary" });
  const disconnect = button("Disconnect", async () => {
    if (!window.confirm("Disconnect the provider? The assistant stops answering until one is connected again.")) return;
    const { ok, data } = await api("DELETE", "/assistant/provider");
    if (!ok) return replace(result, h("p", { class: "alert" }, messageOf(data)));
    const fresh = await api("GET", "/assistant/provider");
    if (fresh.ok) redraw(fresh.data);
    announce("The provider was disconnected");
  }, { class: "danger" });
  return h(
    "div",
    { class: "provider-now" },
    h(
      "dl",
      { class: "facts" },
      h("dt", {}, "Connected"),
      h("dd", {}, kind.label),
      h("dt", {}, "Model"),
      h("dd", {}, provider.model),
      provider.baseUrl ? [h("dt", {}, "Address"), h("dd", {}, provider.baseUrl)] : null,
      h("dt", {}, "Credential"),
      h("dd", {}, provider.auth === "oauth" ? "signed in with the provider" : provider.keyHint ? `API key ending ${provider.keyHint}` : "none"),
    ),
    h("div", { class: "actions" }, test, disconnect),
    result,
  );
}

function testLine(ok, problem, message, at) {
  const stamp = at ? ` (${when(at)})` : "";
  if (ok) return h("p", { class: "test ok" }, `Connection test passed: streaming and tool calling work${stamp}.`);
  return h(
    "div",
    { class: "test bad" },
    h("p", {}, `Connection test failed: ${PROBLEMS[problem] || problem}${stamp}`),
    message ? h("p", { class: "muted" }, `The provider said: ${message}`) : null,
  );
}

async function startOauth(inputs, problems) {
  const { ok, data } = await api("POST", "/assistant/provider/oauth", { kind: inputs.kind.value, model: inputs.model.value.trim() });
  if (!ok) return problems.show(data);
  location.assign(data.url);
}

// --- the budget ----------------------------------------------------------------------

function budgetCard(state) {
  const section = h("section", { class: "card", "aria-labelledby": "budget-h" });
  const draw = (data) => {
    const limit = (value) => h("input", { type: "number", min: 0, step: 1000, value: value ?? "", inputmode: "numeric" });
    const inputs = { personMonthly: limit(data.limits.personMonthly), siteMonthly: limit(data.limits.siteMonthly) };
    const wraps = {
      personMonthly: labelled("Tokens per person per month", inputs.personMonthly, { help: "Empty: no limit." }),
      siteMonthly: labelled("Tokens for the whole site per month", inputs.siteMonthly, { help: "Empty: no limit. The visitor bubble counts here." }),
    };
    const box = alertBox();
    const problems = new Problems(box, (key) => (wraps[key] ? { wrap: wraps[key], input: inputs[key], label: wraps[key].querySelector("label").textContent } : null));
    const status = statusLine();
    const form = h("form", { novalidate: true, "aria-label": "Budget" }, box, h("div", { class: "row" }, wraps.personMonthly, wraps.siteMonthly), h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Save the limits"), status));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const read = (input) => (input.value === "" ? null : Number(input.value));
      const { ok, data: fresh } = await api("PUT", "/assistant/budget", { personMonthly: read(inputs.personMonthly), siteMonthly: read(inputs.siteMonthly) });
      if (!ok) return problems.show(fresh);
      draw(fresh);
      announce("The limits were saved");
    });
    const total = (u) => (u.tokensIn || 0) + (u.tokensOut || 0);
    replace(
      section,
      h("h2", { id: "budget-h" }, "Budget"),
      h("p", {}, `This month (${data.month}) the site used ${total(data.site)} tokens (${data.site.tokensIn} in, ${data.site.tokensOut} out) in ${data.site.requests} requests.`),
      data.people.length
        ? h(
            "div",
            { class: "table-wrap" },
            h(
              "table",
              { class: "stack" },
              h("caption", { class: "visually-hidden" }, "Use this month per person"),
              h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Who"), h("th", { scope: "col" }, "Tokens in"), h("th", { scope: "col" }, "Tokens out"), h("th", { scope: "col" }, "Requests"))),
              h(
                "tbody",
                {},
                data.people.map((p) =>
                  h("tr", {}, h("td", { "data-label": "Who" }, p.name || p.email || "someone"), h("td", { "data-label": "Tokens in" }, p.tokensIn), h("td", { "data-label": "Tokens out" }, p.tokensOut), h("td", { "data-label": "Requests" }, p.requests)),
                ),
              ),
            ),
          )
        : h("p", { class: "muted" }, "Nobody has used the assistant this month."),
      form,
    );
  };
  draw(state);
  return section;
}

// --- the visitor bubble ---------------------------------------------------------------

function bubbleCard(state) {
  const section = h("section", { class: "card", "aria-labelledby": "bubble-h" });
  const enabled = h("input", { type: "checkbox", id: "bubble-enabled", checked: state.enabled });
  const origins = h("textarea", { rows: 3, spellcheck: "false" }, (state.origins || []).join("\n"));
  const rate = h("input", { type: "number", min: 1, max: 600, value: state.ratePerMinute, inputmode: "numeric" });
  const wraps = {
    origins: labelled("Allowed origins", origins, { help: "One per line, like https://www.example.com: the sites whose pages may ask. Others are refused." }),
    ratePerMinute: labelled("Questions per minute from one visitor address", rate),
  };
  const box = alertBox();
  const problems = new Problems(box, (key) => {
    const name = key.split(".")[0];
    const input = { origins, ratePerMinute: rate }[name];
    return input ? { wrap: wraps[name], input, label: wraps[name].querySelector("label").textContent } : null;
  });
  const status = statusLine();
  const snippet = h("div", {});
  const showSnippet = (on) => {
    const src = `${location.origin}${document.body.dataset.prefix || ""}/ext/assistant/widget.js`;
    const code = `<script src="${src}" defer></script>`;
    replace(
      snippet,
      on
        ? [
            h("h3", {}, "Embed it"),
            h("p", { id: "snippet-help" }, "Put this line in your site's pages. Your site's Content-Security-Policy must allow this origin in script-src and connect-src."),
            h("code", { class: "secret", id: "bubble-snippet", tabindex: "0", "aria-describedby": "snippet-help" }, code),
            h("div", { class: "actions" }, copyButton(() => code, "Copy the snippet")),
          ]
        : h("p", { class: "muted" }, "Turned off: the script answers 404 and nobody can ask."),
    );
  };
  const form = h(
    "form",
    { novalidate: true, "aria-label": "Visitor bubble" },
    box,
    h("div", { class: "check" }, enabled, h("label", { for: enabled.id }, "Let visitors ask questions on the website")),
    wraps.origins,
    wraps.ratePerMinute,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Save the bubble"), status),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {
      enabled: enabled.checked,
      origins: origins.value.split(/\s+/).map((o) => o.trim()).filter(Boolean),
      types: state.types || [],
      ratePerMinute: Number(rate.value) || 1,
    };
    const { ok, data } = await api("PUT", "/assistant/bubble", body);
    if (!ok) return problems.show(data);
    problems.clear();
    state = data;
    showSnippet(data.enabled);
    status.textContent = "Saved.";
    announce("The bubble settings were saved");
  });
  showSnippet(state.enabled);
  replace(
    section,
    h("h2", { id: "bubble-h" }, "Visitor bubble"),
    h("p", { class: "muted" }, "A small “Ask a question” button on your website, answering from published content only."),
    form,
    snippet,
  );
  return section;
}

start();
