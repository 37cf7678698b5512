// Two lich sessions editing one file of one checkout are told (lich-plugin's edit guard,
// whose markers it shares): after an Edit, Write or NotebookEdit, the session leaves a
// marker <git dir>/lich-edits/<FNV-1a 32 of the path> = {path, session, at}; when another
// session's marker for that file is under ten minutes old, the model reads a note after
// the tool's result and the footer names the file. Nothing is sent to lich.
import { parsed } from "./client.js";
import { setPart } from "./footer.js";

const WINDOW = 10 * 60 * 1000;
const GIT_WAIT = 2000;

export function newEdits() {
  return { gitDirs: {}, clear: null };
}

// FNV-1a, 32 bits, over the path's UTF-8 bytes, as 8 hex digits.
export function fnv1a(text) {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
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
  showFooter($, s, path.split(/[\\/]/).pop());
  return s.texts.edited(path, minutes);
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

function showFooter($, s, name) {
  setPart($, s.footer, "edits", s.texts.editedFooter(name));
  if (s.edits.clear) {
    s.edits.clear.cancel();
    s.timers.delete(s.edits.clear);
  }
  const timer = $.clock.after(WINDOW, () => {
    s.timers.delete(timer);
    s.edits.clear = null;
    setPart($, s.footer, "edits", "");
  });
  s.edits.clear = timer;
  s.timers.add(timer);
}
