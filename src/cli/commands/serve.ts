/**
 * `cms serve [--role api|worker|all]`: runs the service in this process via `runServer` from
 * src/main.ts, imported lazily so the other commands do not load the server. A worker first takes
 * its young generation (WORKER_SEMI_SPACE_MB, src/cli/worker-heap.ts). Configuration
 * errors (`ConfigError` from src/config.ts) and a busy port are reported as one line.
 */
import { Option, type Command } from 'commander';
import { CliError } from '../errors.ts';
import type { ProcessImage } from '../worker-heap.ts';

/** Process roles of the service: HTTP API, background worker, or both. */
export type Role = 'api' | 'worker' | 'all';

/** Register `serve` on `program`. */
export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run the service (HTTP API and/or background worker); configured by environment variables')
    .addOption(new Option('--role <role>', 'what this process runs').choices(['api', 'worker', 'all']).default('all'))
    .action(async (opts: { role: Role }) => {
      const { ConfigError, loadConfig } = await import('../../config.ts');
      try {
        // A worker runs with a larger young generation: this process image is replaced once, before
        // the server's modules load (worker-heap.ts).
        if (opts.role === 'worker') {
          const { execWorkerHeap } = await import('../worker-heap.ts');
          execWorkerHeap(loadConfig().workerSemiSpaceMb, process as ProcessImage);
        }
        const { runServer } = await import('../../main.ts');
        await runServer({ role: opts.role });
      } catch (err) {
        if (err instanceof ConfigError) throw new CliError(`configuration: ${err.message}`);
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EADDRINUSE' || code === 'EACCES') {
          // runServer has closed what it started; should anything still hold the event loop, the
          // process must not hang: exit shortly after the error is printed.
          setTimeout(() => process.exit(process.exitCode || 1), 2_000).unref();
          throw new CliError(`cannot listen: ${(err as Error).message} (set HOST/PORT)`);
        }
        throw err;
      }
    });
}
