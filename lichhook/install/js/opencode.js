// lichhook for opencode. Added by `lichhook install opencode`; `lichhook uninstall opencode` removes it.
// When opencode creates a session inside lich, this runs lichhook with the event on stdin,
// so lich learns which opencode session its card holds. Outside lich it does nothing.
import { spawn } from "node:child_process";

const PYTHON = "@PYTHON@";
const ARCHIVE = "@ARCHIVE@";
// The interpreter's options: -I keeps the project's PYTHONPATH and folder out, -S skips site.
const FLAGS = "@FLAGS@";

function insideLich() {
  const env = process.env;
  return ["LICH_PORT", "LICH_TOKEN", "LICH_SESSION_ID"].every(
    (name) => typeof env[name] === "string" && env[name].trim() !== "",
  );
}

// Starts lichhook and returns at once: opencode never waits for it, and no failure
// (a missing Python, a closed pipe) reaches opencode.
function forward(event) {
  try {
    const child = spawn(PYTHON, [...FLAGS, ARCHIVE, "opencode"], {
      stdio: ["pipe", "ignore", "ignore"],
      windowsHide: true,
      detached: true,
    });
    child.on("error", () => {});
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(event));
    child.unref();
  } catch {
    // reporting is best effort
  }
}

// opencode calls every export of a plugin module, so this is the only one.
export const LichhookPlugin = async () => {
  if (!insideLich()) return {};
  return {
    event: async ({ event } = {}) => {
      try {
        if (event && event.type === "session.created") forward(event);
      } catch {
        // never disturb opencode
      }
    },
  };
};
