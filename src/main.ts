/**
 * Entry point: `npm start` (role `all` on the embedded default) and `cms serve --role api|worker|all`.
 * Listens on HOST:PORT for the api and all roles; shuts down gracefully on SIGTERM and SIGINT.
 */
import module from 'node:module';
import net from 'node:net';
import { ConfigError, loadConfig, type Role } from './config.ts';

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
 * Resolves when `host`:`port` can be listened on now: a socket is bound there and closed again at once.
 * Rejects with the bind error (`EADDRINUSE`, `EACCES`, `EADDRNOTAVAIL`) as `listen` would. Port 0 (any
 * free port) always can.
 */
export async function checkPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen({ port, host, exclusive: true }, () => resolve());
  });
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}

/**
 * Runs the service until a signal stops it. Rejects with the listen error (`EADDRINUSE`, `EACCES`):
 * before opening anything when the port cannot be bound at start ({@link checkPortFree}), else after
 * closing everything it had started (workers, queue, database, `cms.pid`); and with `ConfigError` on a
 * bad configuration.
 */
export async function runServer(opts: { role?: Role } = {}): Promise<void> {
  const role = opts.role ?? 'all';
  const config = loadConfig();
  // A taken port is reported before anything is opened or written (database, cms.pid, generated admin
  // token and secrets key): the process exits at once and leaves DATA_DIR as it was.
  // The service's modules are loaded only after that check, so that it answers without loading them.
  if (role !== 'worker') await checkPortFree(config.host, config.port);
  const { startService } = await import('./service.ts');
  const service = await startService(config, { role });
  const log = service.deps.logger;
  let address: string | undefined;
  if (role !== 'worker') {
    try {
      address = await service.app.listen({ port: config.port, host: config.host });
    } catch (err) {
      // Port taken since the check above, or not permitted: stop the workers and release the
      // database (and its `cms.pid`) before reporting, so that the process exits and leaves no claim.
      await closeQuietly(service, 15_000);
      throw err;
    }
  }
  // The signal handlers are in place before the service says it runs: a SIGTERM sent on that line
  // gets the graceful shutdown, not Node's default exit.
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
  if (address !== undefined) {
    log.info({ address, database: service.deps.database.kind, docs: `${address}/docs` }, 'cms listening');
  } else {
    log.info({ database: service.deps.database.kind }, 'cms worker running');
  }
  // Every module the role needs is loaded now: write Node's compile cache (bin/cms.js enables it) at
  // once rather than at exit, so that the next start finds it even if this process is killed; a start
  // that finds it does not load Node's TypeScript stripper (about 25 MB less RSS, docs/benchmarks.md).
  module.flushCompileCache?.();
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
