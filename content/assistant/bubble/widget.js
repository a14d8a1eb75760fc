// The visitor bubble (GET /ext/assistant/widget.js). Include it with
//   <script src="https://cms.example/ext/assistant/widget.js" defer></script>
// It talks only to the origin it was loaded from (POST /ext/assistant/public-ask),
// builds its elements with DOM calls (no HTML strings, no inline script or style
// attribute), so it runs under a strict Content-Security-Policy that allows
// this origin in script-src and connect-src.
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || !script.src) return;
  var endpoint = script.src.replace(/\/ext\/assistant\/widget\.js(?:\?.*)?$/, "/ext/assistant/public-ask");

  function el(tag, props) {
    var node = document.createElement(tag);
    Object.keys(props || {}).forEach(function (k) { node[k] = props[k]; });
    return node;
  }
  function css(node, rules) {
    Object.keys(rules).forEach(function (k) { node.style[k] = rules[k]; });
  }

  var root = el("div", { className: "cms-bubble" });
  css(root, { position: "fixed", right: "16px", bottom: "16px", zIndex: "2147483000", font: "15px/1.4 system-ui, sans-serif" });
  var open = el("button", { type: "button", textContent: "Ask a question" });
  open.setAttribute("aria-expanded", "false");
  css(open, { padding: "10px 14px", borderRadius: "20px", border: "1px solid #555", background: "#111", color: "#fff", cursor: "pointer" });
  var panel = el("section", { hidden: true });
  panel.setAttribute("aria-label", "Ask this site");
  css(panel, { width: "min(340px, calc(100vw - 32px))", marginBottom: "8px", padding: "12px", background: "#fff", color: "#111", border: "1px solid #999", borderRadius: "8px", boxShadow: "0 4px 16px rgba(0,0,0,.2)" });
  var log = el("div");
  log.setAttribute("aria-live", "polite");
  css(log, { maxHeight: "50vh", overflowY: "auto" });
  var form = el("form");
  var label = el("label", { textContent: "Your question", htmlFor: "cms-bubble-q" });
  css(label, { display: "block", fontWeight: "600", marginTop: "8px" });
  var input = el("input", { id: "cms-bubble-q", type: "text", maxLength: 1000, required: true });
  css(input, { width: "100%", boxSizing: "border-box", padding: "6px", margin: "4px 0" });
  var send = el("button", { type: "submit", textContent: "Ask" });
  form.append(label, input, send);
  panel.append(log, form);
  root.append(panel, open);

  open.addEventListener("click", function () {
    panel.hidden = !panel.hidden;
    open.setAttribute("aria-expanded", String(!panel.hidden));
    if (!panel.hidden) input.focus();
  });

  function say(who, text, sources) {
    var item = el("p");
    item.append(el("strong", { textContent: who + ": " }), document.createTextNode(text));
    log.append(item);
    if (sources && sources.length) {
      var list = el("ul");
      sources.forEach(function (s) {
        var li = el("li");
        if (s.url && /^https?:\/\//.test(s.url)) li.append(el("a", { href: s.url, textContent: s.title }));
        else li.textContent = s.title;
        list.append(li);
      });
      log.append(list);
    }
    log.scrollTop = log.scrollHeight;
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var question = input.value.trim();
    if (!question) return;
    say("You", question);
    input.value = "";
    send.disabled = true;
    fetch(endpoint, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ question: question }),
      credentials: "omit",
    })
      .then(function (r) { return r.json().then(function (b) { return { ok: r.ok, body: b }; }); })
      .then(function (r) {
        if (r.ok) say("Answer", r.body.answer, r.body.sources);
        else say("Sorry", r.body.error || "the question could not be answered");
      })
      .catch(function () { say("Sorry", "the site could not be reached"); })
      .finally(function () { send.disabled = false; });
  });

  document.body.append(root);
})();
