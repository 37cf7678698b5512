// The one "lich:" line this plugin keeps under the prompt: each mod owns a part
// (errands, workers, edits). It is drawn dim among the footer's mode labels (Claude
// Code's SessionMode component), not as a status warning, and redrawn only when it
// changes. lich's errands count every worker the session opened, so while they show the
// worker count is left out (lich-plugin 0.18.0).

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
  $.ui.invalidate("ui.render");
}

// The `ui.render` hook for SessionMode: the line goes after the engine's own labels.
// Props that are not a list of labels are passed on untouched.
export function drawn($, e, next, footer) {
  const modes = e.props && e.props.modes;
  if (!footer.line || !Array.isArray(modes)) return next(e);
  return next({ ...e, props: { ...e.props, modes: [...modes, footer.line] } });
}
