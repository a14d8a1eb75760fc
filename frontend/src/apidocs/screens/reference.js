// An API's reference page: Swagger UI over the service's own OpenAPI
// document (the page's data-spec attribute), with "Try it out" against this
// very instance. The page already carries a plain, server-rendered reference
// (readable without JavaScript); once Swagger UI has drawn, that one hides.
import SwaggerUIBundle from "swagger-ui-dist/swagger-ui-es-bundle.js";

const root = document.getElementById("swagger");
const plain = document.getElementById("plain");

// Code samples and answers scroll sideways: each gets a tab stop so a
// keyboard can scroll it (axe: scrollable-region-focusable).
new MutationObserver(() => {
  for (const block of root.querySelectorAll("pre.microlight:not([tabindex])")) {
    block.tabIndex = 0;
  }
}).observe(root, { childList: true, subtree: true });

SwaggerUIBundle({
  url: root.dataset.spec,
  domNode: root,
  // Deep links put a link inside each operation's toggle button (a control
  // inside a control, which screen readers cannot reach): off.
  deepLinking: false,
  // Requests go to this origin only (the document's servers are this instance).
  tryItOutEnabled: false,
  withCredentials: true,
  // No call to the public validator service: nothing leaves for another origin.
  validatorUrl: null,
  displayRequestDuration: true,
  defaultModelsExpandDepth: 0,
  docExpansion: "list",
  filter: true,
  syntaxHighlight: { activated: true, theme: "agate" },
  onComplete() {
    plain.hidden = true;
    root.hidden = false;
  },
});
