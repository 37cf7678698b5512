// lichhook for omp (oh-my-pi). Added by `lichhook install omp`; `lichhook uninstall omp` removes it.
// Inside lich, this hands each event lich's card needs to one `lichhook omp --serve`, a line each,
// with what the event and omp's context say (docs/harness-events.md says what and why); lichhook
// leaves out a task sub-agent's session (omp runs extensions there too). Outside lich it
// subscribes to nothing.
import { EVENTS, forward, insideLich, saying, shortened } from "../common/forward.js";

// A non-empty string from one of omp's getters, or undefined (when it throws too).
function text(read) {
  try {
    const value = read();
    return typeof value === "string" && value !== "" ? value : undefined;
  } catch {
    return undefined;
  }
}

function reporter(type) {
  // Returns nothing: a value from an omp handler can mean a decision (tool_call blocks a call).
  return (event, ctx) => {
    try {
      const manager = ctx?.sessionManager;
      const message = {
        type,
        session_id: text(() => manager?.getSessionId?.()) ?? null, // none: reported without one
        session_name: text(() => manager?.getSessionName?.()),
        cwd: text(() => ctx?.cwd),
        session_file: text(() => manager?.getSessionFile?.()) ?? null,
        parent_session: text(() => manager?.getHeader?.()?.parentSession) ?? null,
      };
      if (type === "tool_call" || type === "tool_result") {
        message.toolName = event?.toolName;
        message.input = shortened(event?.input);
        if (type === "tool_result") message.isError = event?.isError;
      }
      forward(type, message);
    } catch {
      // never disturb omp
    }
  };
}

export default function lichhook(pi) {
  if (!insideLich() || !pi || typeof pi.on !== "function") return;
  saying((message) => pi.logger?.warn?.(message));
  for (const type of Object.keys(EVENTS)) pi.on(type, reporter(type));
}
