// The three variables lich puts in each session's environment, checked as lichhook's Python
// checks them (lichhook/lichenv.py): each set and not blank, LICH_PORT a decimal port 1-65535.
// Each caller reads them its own way: node's process.env in opencode and omp, `$.env.get` in
// Claude Code (which takes only a literal name).

// {base, token, session}: where lich listens and as whom to report; null outside lich.
export function lichTarget(port, token, session) {
  const set = [port, token, session].every((value) => typeof value === "string" && value.trim() !== "");
  if (!set || !/^[0-9]{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) return null;
  return { base: `http://127.0.0.1:${Number(port)}`, token, session };
}
