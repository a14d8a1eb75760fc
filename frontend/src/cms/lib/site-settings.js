// The site settings' inputs (GET/PATCH /api/settings), shared by the settings
// screen and the website parts editor.
export const SETTINGS_FIELDS = [
  { key: "title", type: "text", label: "Site title", maxLength: 200 },
  { key: "tagline", type: "text", label: "Tagline", maxLength: 300 },
  { key: "description", type: "textarea", label: "Description", maxLength: 2000 },
  { key: "logo", type: "media", label: "Logo" },
  { key: "socialImage", type: "media", label: "Social image", help: "Shown when a page is shared." },
];

// Empty texts are sent as null: the setting is cleared.
export function settingsBody(values) {
  const body = { ...values };
  for (const key of ["title", "tagline", "description"]) if (body[key] === "") body[key] = null;
  return body;
}
