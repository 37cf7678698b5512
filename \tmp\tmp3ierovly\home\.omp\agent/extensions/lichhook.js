// lichhook for omp (oh-my-pi). Added by `lichhook install omp`; `lichhook uninstall omp` removes it.
// When a session starts or omp moves to another one (/new, /resume, /fork, /branch) inside lich, this
// runs lichhook with {"type", "session_id", "session_file", "parent_session"} on stdin; lichhook
// leaves out a task sub-agent's session (omp runs extensions there too). Outside lich it
// subscribes to nothing.
import { spawn } from "node:child_process";

const PYTHON = "/usr/bin/python3";
const ARCHIVE = "/tmp/tmp3ierovly/home/.local/share/lichhook/lichhook.pyz";
// The interpreter's options: -I keeps the project's PYTHONPATH and folder out, -S skips site.
const FLAGS = ["-I", "-S"];

function insideLich() {
  const env = process.env;
  return ["LICH_PORT", "LICH_TOKEN", "LICH_SESSION_ID"].every(
    (name) => typeof env[name] === "string" && env[name].trim() !== "",
  );
}

// Starts lichhook and returns at once: omp never waits for it, and no failure reaches omp.
function forward(message) {
  try {
    const child = spawn(PYTHON, [...FLAGS, ARCHIVE, "omp"], {
      stdio: ["pipe", "ignore", "ignore"],
      windowsHide: true,
      detached: true,
    });
    child.on("error", () => {});
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(message));
    child.unref();
  } catch {
    // reporting is best effort
  }
}

function reporter(type) {
  // Returns nothing: a value from an omp handler can mean a decision.
  return (_event, ctx) => {
    try {
      const manager = ctx?.sessionManager;
      const id = manager?.getSessionId?.();
      if (typeof id !== "string" || id === "") return;
      const file = manager.getSessionFile?.();
      const parent = manager.getHeader?.()?.parentSession;
      forward({
        type,
        session_id: id,
        session_file: typeof file === "string" ? file : null,
        parent_session: typeof parent === "string" ? parent : null,
      });
    } catch {
      // never disturb omp
    }
  };
}

export default function lichhook(pi) {
  if (!insideLich() || !pi || typeof pi.on !== "function") return;
  pi.on("session_start", reporter("session_start"));
  pi.on("session_switch", reporter("session_switch"));
  pi.on("session_branch", reporter("session_branch"));
}
