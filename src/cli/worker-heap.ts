/**
 * The young generation of a worker process (docs/operations.md "Sizing").
 *
 * `cms` starts Node with a small V8 young generation (`--max-semi-space-size=8`) so that an API
 * process stays small under load. A worker allocates for every message in flight, hundreds at once,
 * and with 8 MB much of that lives long enough to be promoted before it dies: measured on the million
 * benchmark, 32 MB took the workers' CPU from 136-170 to 113-122 µs a message. Node reads the flag
 * only when it starts, so `cms serve --role worker` replaces its own process image once, before
 * anything else runs, with the same arguments and `--max-semi-space-size=<WORKER_SEMI_SPACE_MB>`
 * (`process.execve`: the same PID, file descriptors and environment, so process managers and signals
 * see no difference). Nothing is done when the flag already has that value (which also ends the
 * replacement after one round), when WORKER_SEMI_SPACE_MB is 0, or where `process.execve` does not
 * exist (Windows).
 */

const FLAG = /^--max[-_]semi[-_]space[-_]size(?:=|$)/;

/**
 * Node's own arguments (`execArgv`) for a worker: `execArgv` without any young-generation flag (in
 * its `--flag=N` or `--flag N` form, dashes or underscores), plus `--max-semi-space-size=<mb>` last.
 */
export function workerExecArgv(execArgv: readonly string[], mb: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const arg = execArgv[i]!;
    if (FLAG.test(arg)) {
      if (!arg.includes('=')) i++; // `--max-semi-space-size 8`: its value is the next argument
      continue;
    }
    out.push(arg);
  }
  return [...out, `--max-semi-space-size=${mb}`];
}

/** What {@link execWorkerHeap} needs of the process (the real one in production, a fake in tests). */
export interface ProcessImage {
  execPath: string;
  execArgv: readonly string[];
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
  execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never;
}

/**
 * Replaces the process image with one whose young generation is `mb` MB (see the module comment);
 * returns only when it does nothing: `mb` 0, the flag already `--max-semi-space-size=<mb>`, or no
 * `execve`. Throws what `execve` throws (the process is then unchanged).
 */
export function execWorkerHeap(mb: number, proc: ProcessImage): void {
  if (mb <= 0 || !proc.execve) return;
  const wanted = `--max-semi-space-size=${mb}`;
  const current = proc.execArgv.filter((a) => FLAG.test(a));
  if (current.length === 1 && current[0] === wanted) return;
  proc.execve(proc.execPath, [proc.execPath, ...workerExecArgv(proc.execArgv, mb), ...proc.argv.slice(1)], proc.env);
}
