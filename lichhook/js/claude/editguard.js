// Two lich sessions editing one file of one checkout are told (lich-plugin's edit guard,
// whose markers it shares): after an Edit, Write or NotebookEdit, the session leaves a
// marker <git dir>/lich-edits/<FNV-1a 32 of the path> = {path, session, at}; when another
// session's marker for that file is under ten minutes old, the model reads a note after
// the tool's result and the footer names the file and that session, by the label on its
// card when lich's command line lists it (lich 0.60.0 lists ids), else by its id, until
// the edit leaves the ten minutes. Nothing is sent to lich.
import { parsed } from "./client.js";
import { setPart } from "./footer.js";

const WINDOW = 10 * 60 * 1000;
const GIT_WAIT = 2000;
const LICH_WAIT = 2000; // the edit's result waits on the label

export function newEdits() {
  return { gitDirs: {}, clear: null };
}

// FNV-1a, 32 bits, over the path's UTF-16 code units (as lich-plugin names its markers, so
// both find each other's for any path), as 8 hex digits.
export function fnv1a(text) {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

export async function edited($, e, next, s) {
  const result = await next(e);
  if (!s.live || !result || result.deny !== undefined || result.isError) return result;
  const path = typeof e.file_path === "string" ? e.file_path : typeof e.notebook_path === "string" ? e.notebook_path : "";
  if (!path.startsWith("/") && !/^[A-Za-z]:[\\/]/.test(path)) return result;
  try {
    const note = await guard($, s, path);
    if (note) return { ...result, context: [...(result.context || []), note] };
  } catch {
    // the guard is a courtesy: an edit never fails for it
  }
  return result;
}

async function guard($, s, path) {
  const gitDir = await gitDirOf($, s, path.replace(/[\\/][^\\/]*$/, "") || "/");
  if (!gitDir) return "";
  const marker = `${gitDir}/lich-edits/${fnv1a(path)}`;
  const now = await $.clock.now();
  const before = (await $.fs.exists(marker)) ? parsed(String(await $.fs.read(marker))) : undefined;
  await $.fs.write(marker, JSON.stringify({ path, session: s.env.session, at: now }));
  if (!other(before, path, s.env.session, now)) return "";
  const minutes = Math.max(1, Math.ceil((now - before.at) / 60000));
  const who = await whoEdited($, before.session);
  showFooter($, s, path.split(/[\\/]/).pop(), who, before.at + WINDOW - now);
  return s.texts.edited(path, minutes, who);
}

// The session `id` as the person knows it: "<the label on its card>", or its id when lich's
// command line cannot say (no LICH_BIN, a lich before 0.60.0, no answer within 2 s).
export async function whoEdited($, id) {
  try {
    const bin = await $.env.get("LICH_BIN");
    const r = bin ? await $.process.run([bin, "sessions", "--json"], { timeoutMs: LICH_WAIT }) : null;
    const peers = r && r.exitCode === 0 ? parsed(String(r.stdout).trim()) : undefined;
    const peer = Array.isArray(peers) ? peers.find((p) => p && typeof p === "object" && p.id === id) : undefined;
    if (peer && typeof peer.label === "string" && peer.label.trim()) return `"${shown(peer.label)}"`;
  } catch {
    // the id it is
  }
  return shown(id);
}

// One line of at most 64 characters: a marker is any session's file, its id any text.
function shown(text) {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 64 ? `${line.slice(0, 63)}…` : line;
}

// Whether `marker` is another session's recent edit of `path`.
export function other(marker, path, session, now) {
  return !!marker && typeof marker === "object" && marker.path === path && typeof marker.session === "string"
    && marker.session !== session && typeof marker.at === "number" && now - marker.at >= 0 && now - marker.at < WINDOW;
}

async function gitDirOf($, s, folder) {
  if (folder in s.edits.gitDirs) return s.edits.gitDirs[folder];
  let found = "";
  try {
    const r = await $.process.run(["git", "-C", folder, "rev-parse", "--absolute-git-dir"], { timeoutMs: GIT_WAIT });
    if (r && r.exitCode === 0) found = String(r.stdout).trim();
  } catch {
    // not a checkout, or no git: nothing to guard
  }
  s.edits.gitDirs[folder] = found;
  return found;
}

function showFooter($, s, name, who, left) {
  setPart($, s.footer, "edits", s.texts.editedFooter(name, who));
  if (s.edits.clear) {
    s.edits.clear.cancel();
    s.timers.delete(s.edits.clear);
  }
  const timer = $.clock.after(left, () => {
    s.timers.delete(timer);
    s.edits.clear = null;
    setPart($, s.footer, "edits", "");
  });
  s.edits.clear = timer;
  s.timers.add(timer);
}
