/**
 * What one `cms` run reads and writes: its output streams, its input, its environment and its working
 * directory. `bin/cms.js` runs with the process's own ({@link processIo}); the tests run commands in
 * their own process with captured streams, a clean environment and a temporary directory (a child
 * process per command cost about 0.13 s of CPU each, 331 of them per `npm test`).
 * Every command reads these through the `CliIo` it is given, never through `process` directly.
 */
import path from 'node:path';

/** An output stream of a run: stdout or stderr (a Node Writable; `isTTY`/`columns` when it is a terminal). */
export type CliOutput = NodeJS.WritableStream & { readonly isTTY?: boolean; readonly columns?: number; hasColors?(): boolean };

/** The streams, environment and working directory of one run. */
export interface CliIo {
  readonly stdout: CliOutput;
  readonly stderr: CliOutput;
  /** Standard input (read only by `--template -`). */
  readonly stdin: AsyncIterable<Buffer | string>;
  /** Environment variables (CMS_URL, ADMIN_TOKEN, PORT, DATA_DIR, CMS_DEBUG). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The directory relative file names (CSV files, templates, `--output`, DATA_DIR) are resolved against. */
  readonly cwd: string;
}

/** The process's own streams, environment and working directory. */
export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd() };
}

/** `file` as an absolute path, relative names resolved against the run's working directory. */
export function inCwd(io: CliIo, file: string): string {
  return path.resolve(io.cwd, file);
}
