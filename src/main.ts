/**
 * Entry point: `npm start` (role `all` on the embedded default) and `cms serve --role api|worker|all`.
 * Listens on HOST:PORT for the api and all roles; shuts down gracefully on SIGTERM and SIGINT.
 */
import module from 'node:module';
import { ConfigError, loadConfig, type Role } from './config.ts';
import { startService } from './service.ts';

/** Closes the service, giving up after `timeoutMs`; errors are ignored (the caller reports its own). */
async function closeQuietly(service: { close(): Promise<void> }, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    service.close().catch(() => undefined),
    new Promise<void>((r) => { timer = setTimeout(r, timeoutMs); }),
  ]);
  clearTimeout(timer);
}

/**
 * Runs the service until a signal stops it. Rejects with the listen error (`EADDRINUSE`, `EACCES`)
 * after closing everything it had started (workers, queue, database, `cms.pid`), and with
 * `ConfigError` on a bad configuration.
 */
export async function runServer(opts: { role?: Role } = {}): Promise<void> {
  const role = opts.role ?? 'all';
  const config = loadConfig();
  const service = await startService(config, { role });
  const log = service.deps.logger;
  if (role !== 'worker') {
    let address: string;
    try {
      address = await service.app.listen({ port: config.port, host: config.host });
    } catch (err) {
      // Port in use or not permitted (issue 13): stop the workers and release the database (and
      // its `cms.pid`) before reporting, so that the process exits at once and leaves nothing behind.
      await closeQuietly(service, 15_000);
      throw err;
    }
    log.info({ address, database: service.deps.database.kind, docs: `${address}/docs` }, 'cms listening');
  } else {
    log.info({ database: service.deps.database.kind }, 'cms worker running');
  }
  // Every module the role needs is loaded now: write Node's compile cache (bin/cms.js enables it) at
  // once rather than at exit, so that the next start finds it even if this process is killed; a start
  // that finds it does not load Node's TypeScript stripper (about 25 MB less RSS, docs/benchmarks.md).
  module.flushCompileCache?.();
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 30_000);
    force.unref();
    service.close().then(() => process.exit(0), (err) => {
      log.error({ err }, 'shutdown failed');
      process.exit(1);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

if (import.meta.main) {
  runServer().catch((err) => {
    if (err instanceof ConfigError) {
      console.error(`cms: ${err.message}`);
    } else {
      console.error(err);
    }
    process.exit(1);
  });
}
