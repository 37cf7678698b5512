// What the JS tests take from this checkout: its root, the Python that runs lichhook's own code
// from it, and the opencode and omp modules as install writes them: lichhook's own bundling
// (lichhook.install.harnesses.modules.bundled) with the four values install writes filled in here, so a
// test chooses the "Python" (node itself, or one that does not exist), the archive (a script
// standing in for `lichhook <provider> --serve`) and the events.
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const PYTHON = process.env.LICHHOOK_PYTHON || (process.platform === "win32" ? "python" : "python3");

const bundles = {};

function bundle(kind) {
  const code = "import sys; from lichhook.install.harnesses.modules import MODULES, bundled; "
    + "sys.stdout.buffer.write(bundled(MODULES[sys.argv[1]], set()).encode())";
  bundles[kind] ??= execFileSync(PYTHON, ["-c", code, kind], { cwd: ROOT }).toString("utf8");
  return bundles[kind];
}

let made = 0;

// The module imported from a file of its own in `folder` (a new one when none is given).
export async function rendered(kind, { python = process.execPath, archive = "none.mjs", events = {}, folder } = {}) {
  folder ??= mkdtempSync(join(tmpdir(), `lichhook-${kind}-`));
  const source = bundle(kind)
    .replace('"@PYTHON@"', JSON.stringify(python))
    .replace('"@ARCHIVE@"', JSON.stringify(join(folder, archive)))
    .replace('"@FLAGS@"', "[]")
    .replace('"@EVENTS@"', JSON.stringify(events));
  const path = join(folder, `${kind}-${made++}.mjs`);
  writeFileSync(path, source);
  return import(pathToFileURL(path).href);
}
