/**
 * Entry point: `npm start` (role `all` on the embedded default) and `cms serve --role api|worker|all`.
 * Listens on HOST:PORT for the api and all roles; shuts down gracefully on SIGTERM and SIGINT.
 */
import { ConfigError, loadConfig, type Role } from './config.ts';
import { startService } from './service.ts';

/** Runs the service until a signal stops it. */
export async function runServer(opts: { role?: Role } = {}): Promise<void> {
  const role = opts.role ?? 'all';
  const config = loadConfig();
  const service = await startService(config, { role });
  const log = service.deps.logger;
  if (role !== 'worker') {
    const address = await service.app.listen({ port: config.port, host: config.host });
    log.info({ address, database: service.deps.database.kind, docs: `${address}/docs` }, 'cms listening');
  } else {
    log.info({ database: service.deps.database.kind }, 'cms worker running');
  }
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
