// The one "lich:" line this plugin keeps under the prompt: each mod owns a part
// (errands, workers, edits) and the line is drawn again only when it changes. lich's
// errands count every worker the session opened, so while they show the worker count is
// left out (lich-plugin 0.18.0).

const ORDER = ["errands", "workers", "edits"];

export function newFooter() {
  return { parts: {}, line: "" };
}

export function setPart($, footer, name, text) {
  if (text) footer.parts[name] = text;
  else delete footer.parts[name];
  const shown = ORDER.filter((key) => footer.parts[key] && !(key === "workers" && footer.parts.errands))
    .map((key) => footer.parts[key]);
  const line = shown.length ? `lich: ${shown.join(" · ")}` : "";
  if (line === footer.line) return;
  footer.line = line;
  $.ui.status(line || undefined);
}
